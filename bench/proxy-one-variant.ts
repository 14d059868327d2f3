/**
 * Child of `npm run bench -- proxy-instructions`, run under valgrind: N tool calls (each a POST
 * answered by an SSE stream of 4 id-bearing events, as in bench/proxy.ts) at concurrency 8 through
 * VARIANT (`direct`, `bare`, `forkwatch`, `guard`), then prints RUN_OK.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createForkwatchProxy } from '../src/proxy/index.js';

const variant = process.env.VARIANT ?? 'forkwatch';
const N = Number(process.env.N ?? 60);

class DiscardExporter implements SpanExporter {
  export(_spans: ReadableSpan[], done: (r: { code: number }) => void): void {
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
}

let eventSeq = 0;
const upstream = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const id = (JSON.parse(Buffer.concat(chunks).toString()) as { id: number }).id;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'bench-session' });
    let i = 0;
    const next = (): void => {
      i++;
      const last = i === 4;
      const msg = last
        ? { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `done ${i}` }] } }
        : { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: id, progress: i, message: `step ${i}` } };
      const frame = `id: e${++eventSeq}\ndata: ${JSON.stringify(msg)}\n\n`;
      if (last) res.end(frame);
      else {
        res.write(frame);
        setImmediate(next);
      }
    };
    next();
  });
});
await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
const upPort = (upstream.address() as AddressInfo).port;

let port = upPort;
let close = async (): Promise<void> => {};
if (variant === 'bare') {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const server = http.createServer({ keepAlive: true }, (req, res) => {
    const up = http.request({ agent, host: '127.0.0.1', port: upPort, method: req.method, path: req.url, headers: req.headers }, (ures) => {
      res.writeHead(ures.statusCode ?? 502, ures.headers);
      ures.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  close = async () => {
    server.closeAllConnections();
    server.close();
    agent.destroy();
  };
} else if (variant === 'forkwatch' || variant === 'guard') {
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new DiscardExporter())] });
  const px = await createForkwatchProxy({ upstream: `http://127.0.0.1:${upPort}`, host: '127.0.0.1', port: 0, guard: variant === 'guard', tracerProvider: provider });
  port = px.port;
  close = () => px.close();
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
function call(id: number): Promise<void> {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'report', arguments: {}, _meta: { progressToken: id } } });
  return new Promise((resolve, reject) => {
    const req = http.request(
      { agent, host: '127.0.0.1', port, method: 'POST', path: '/mcp', headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'mcp-session-id': 'bench-session' } },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', () => undefined);
        res.on('end', resolve);
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
let n = 0;
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (n < N) await call(n++);
  }),
);
await close();
agent.destroy();
upstream.close();
console.log('RUN_OK');
