/**
 * The baseline of the proxy benches: a bare `node:http` pipe proxy (keep-alive both sides), what
 * any reverse proxy written in Node pays for the second hop and nothing else.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts one in front of `127.0.0.1:upPort`; `keepAliveTimeoutMs` for its server (Node's default 5 s). */
export async function startBarePipe(upPort: number, keepAliveTimeoutMs?: number): Promise<{ port: number; close(): Promise<void> }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const server = http.createServer({ keepAlive: true }, (req, res) => {
    const up = http.request({ agent, host: '127.0.0.1', port: upPort, method: req.method, path: req.url, headers: req.headers }, (ures) => {
      res.writeHead(ures.statusCode ?? 502, ures.headers);
      ures.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  if (keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = keepAliveTimeoutMs;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      server.close();
      agent.destroy();
    },
  };
}
