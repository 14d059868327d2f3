import { createServer, type IncomingMessage, type Server } from 'node:http';
import { decodeProtobuf } from '../../../src/otlp/decode-protobuf.js';
import { ATTR_SESSION_KEY } from '../../../packages/instrumentation/src/semconv.js';

export interface OtlpTee {
  /** OTLP/HTTP base URL to export to. */
  url: string;
  /** Every non-empty `forkwatch.session.key` seen in a forwarded request. */
  sessionKeys: Set<string>;
  /** Requests the primary answered 200 / otherwise. */
  counts: { ok: number; failed: number; spans: number };
  close(): Promise<void>;
}

/**
 * Test plumbing: an OTLP/HTTP (protobuf) endpoint that forwards each request to `primary` (the
 * gateway, whose answer it returns) and to `reference` (a single detector fed the same spans), so
 * a sharded deployment can be compared with one detector on the same input. It also notes every
 * session key it forwards.
 */
export async function startOtlpTee(primary: string, reference: string, referenceHeaders: Record<string, string> = {}): Promise<OtlpTee> {
  const sessionKeys = new Set<string>();
  const counts = { ok: 0, failed: 0, spans: 0 };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      try {
        for (const s of decodeProtobuf(body).spans) {
          const key = s.attributes[ATTR_SESSION_KEY];
          if (typeof key === 'string' && key !== '') sessionKeys.add(key);
        }
      } catch {
        // Not ours to judge: both targets answer it.
      }
      const headers = { 'content-type': req.headers['content-type'] ?? 'application/x-protobuf' };
      const send = (base: string, extra: Record<string, string> = {}) =>
        fetch(`${base}/v1/traces`, { method: 'POST', body, headers: { ...headers, ...extra }, signal: AbortSignal.timeout(30_000) });
      const [p, r] = await Promise.allSettled([send(primary), send(reference, referenceHeaders)]);
      if (r.status === 'fulfilled') await r.value.arrayBuffer();
      if (p.status === 'rejected') {
        counts.failed++;
        res.writeHead(503, { 'retry-after': '1' }).end();
        return;
      }
      const answer = Buffer.from(await p.value.arrayBuffer());
      if (p.value.status === 200) {
        counts.ok++;
        counts.spans += decodeSafe(body);
      } else counts.failed++;
      res.writeHead(p.value.status, { 'content-type': p.value.headers.get('content-type') ?? 'application/x-protobuf' }).end(answer);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    sessionKeys,
    counts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function decodeSafe(body: Buffer): number {
  try {
    return decodeProtobuf(body).spans.length;
  } catch {
    return 0;
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
