/**
 * Child of `npm run bench -- proxy-instructions`, run under valgrind (callgrind): tool calls (each
 * a POST answered by an SSE stream of 4 id-bearing events, as in bench/proxy.ts) at concurrency 8
 * through VARIANT (`direct`, `bare`, `forkwatch`, `guard`): WARMUP calls, then for each of
 * WINDOWS=S,L a full GC, a 20-call settling round and a window of that many calls, announced on
 * stdout and started and ended only when the caller answers `go` on stdin, so that the counter is
 * switched exactly around it (as bench/one-variant.ts). Without WINDOWS: N calls. Prints
 * `SPANS n` (spans the proxy emitted over the whole run) and RUN_OK.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createForkwatchProxy } from '../src/proxy/index.js';
import { startBarePipe } from './bare-pipe-proxy.js';
import { countedWindows } from './window-gate.js';

const variant = process.env.VARIANT ?? 'forkwatch';
const CONCURRENCY = 8;

class CountingExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (r: { code: number }) => void): void {
    this.spans += spans.length;
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
// Idle keep-alive sockets must outlive the pauses around the windows (callgrind_control is slow
// under load): a server closing one as the client reuses it fails the call (ECONNRESET).
upstream.keepAliveTimeout = 600_000;
await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
const upPort = (upstream.address() as AddressInfo).port;

let port = upPort;
let close = async (): Promise<void> => {};
const exporter = new CountingExporter();
if (variant === 'bare') {
  const bare = await startBarePipe(upPort, 600_000);
  port = bare.port;
  close = bare.close;
} else if (variant === 'forkwatch' || variant === 'guard') {
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
  const delay = process.env.REQUEST_SPAN_DELAY_MS;
  const px = await createForkwatchProxy({
    upstream: `http://127.0.0.1:${upPort}`,
    host: '127.0.0.1',
    port: 0,
    guard: variant === 'guard',
    tracerProvider: provider,
    ...(delay === undefined ? {} : { requestSpanDelayMs: Number(delay) }),
  });
  port = px.port;
  close = async () => {
    await px.close();
    await provider.shutdown();
  };
}

// The proxy's own server keeps the default 5 s keep-alive: the client lets idle sockets go first.
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY, timeout: 2000 });
let nextId = 0;
let retries = 0;
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
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('error', (err: NodeJS.ErrnoException) => {
      // A connection the server closed before answering, around the pauses at the windows (they
      // outlast the servers' keep-alive bounds under valgrind): retried, counted.
      if (!answered && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
        retries++;
        call(id).then(resolve, reject);
      } else reject(err);
    });
    req.end(body);
  });
}
async function round(n: number): Promise<void> {
  let left = n;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) await call(nextId++);
    }),
  );
}

if (process.env.WINDOWS) {
  await round(Number(process.env.WARMUP ?? 2000));
  await countedWindows(
    process.env.WINDOWS.split(',').map(Number),
    async () => {
      (globalThis as { gc?: () => void }).gc?.();
      await round(20);
    },
    round,
  );
} else {
  await round(Number(process.env.N ?? 60));
}
await close();
agent.destroy();
upstream.close();
console.log(`SPANS ${exporter.spans}`);
console.log(`RETRIES ${retries}`);
console.log('RUN_OK');
