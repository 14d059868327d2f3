import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { wireTap, type WireTap, type WireTapOptions } from '../../src/demo/wire-tap.js';

/** Headers a forwarder must not pass on as they are: hop-by-hop ones, and the body framing fetch re-does. */
const DROP_REQUEST = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'upgrade']);
/** fetch decodes the body: its length and encoding no longer hold. */
const DROP_RESPONSE = new Set(['connection', 'keep-alive', 'content-length', 'content-encoding', 'transfer-encoding']);

/** The request headers to send upstream: every header but the hop-by-hop and framing ones. */
export function forwardedRequestHeaders(raw: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined || DROP_REQUEST.has(k.toLowerCase())) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** The response headers to send back to the client, as `[name, value]` pairs (set-cookie kept apart). */
export function forwardedResponseHeaders(h: Headers): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  h.forEach((v, k) => {
    if (!DROP_RESPONSE.has(k.toLowerCase())) out.push([k, v]);
  });
  return out;
}

/** A running {@link startTapForwarder}. */
export interface TapForwarder {
  /** `http://127.0.0.1:<port>` + path. */
  url(path?: string): string;
  tap: WireTap;
  close(): Promise<void>;
}

/**
 * The wire tap of a client in another process (the corpus's Python client): an HTTP forwarder on
 * 127.0.0.1 the client connects to, forwarding each request to `upstream` (the fault proxy)
 * through src/demo/wire-tap.ts's `wireTap(fetch)`, so every exchange and every id-bearing SSE
 * event is recorded in the shape the TypeScript seed's tap records (wire-labels.ts reads it), as
 * the bytes leave for the client. The network's failures are passed down: a response body that
 * breaks upstream (the fault proxy's partition) destroys the client's socket, so the client sees
 * its stream cut; a client that goes away aborts the upstream request.
 */
export async function startTapForwarder(upstream: string, opts: WireTapOptions = {}): Promise<TapForwarder> {
  const tap = wireTap(fetch, opts);
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer((req, res) => void forward(req, res));
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const forward = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    try {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const method = req.method ?? 'GET';
      const body = method === 'GET' || method === 'HEAD' ? undefined : Buffer.concat(chunks);
      const answer = await tap.fetch(new URL(req.url ?? '/', upstream).toString(), {
        method,
        headers: forwardedRequestHeaders(req.headers),
        ...(body !== undefined ? { body } : {}),
        signal: abort.signal,
      });
      res.writeHead(answer.status, forwardedResponseHeaders(answer.headers).flat());
      res.flushHeaders();
      if (!answer.body) {
        res.end();
        return;
      }
      const down = Readable.fromWeb(answer.body as import('node:stream/web').ReadableStream<Uint8Array>);
      down.on('error', () => res.destroy());
      down.pipe(res);
    } catch {
      // The network failed before or while answering: the client sees its connection reset.
      res.destroy();
    }
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: (path = '/') => `http://127.0.0.1:${port}${path}`,
    tap,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
