import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendJsonRpcError } from './http-body.js';

/**
 * Serves `handle` on 127.0.0.1 at an OS-chosen port. A handler that fails unexpectedly answers
 * a JSON-RPC 500 (or drops the connection once headers are out) instead of crashing the demo.
 */
export async function listenLoopback(
  handle: (req: http.IncomingMessage, res: http.ServerResponse) => unknown,
): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    Promise.resolve()
      .then(() => handle(req, res))
      .catch(() => {
        if (!res.headersSent) sendJsonRpcError(res, 500, -32603, 'Internal error');
        else res.destroy();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}
