import type { IncomingMessage } from 'node:http';

/** Result of {@link readJsonBody}. */
export type JsonBody = { ok: true; value: unknown } | { ok: false; reason: 'too_large' | 'invalid_json' | 'aborted' };

/**
 * Reads and parses a request body as JSON, bounded: past `maxBytes` the rest is drained and
 * discarded (nothing more is kept), so the caller can still answer 413.
 */
export function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<JsonBody> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    const chunks: Buffer[] = [];
    let total = 0;
    let done = false;
    const finish = (r: JsonBody): void => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onError);
      if (!r.ok) req.resume();
      resolve(r);
    };
    const onData = (chunk: Buffer | string): void => {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      total += buf.length;
      if (total > maxBytes) return finish({ ok: false, reason: 'too_large' });
      chunks.push(buf);
    };
    const onEnd = (): void => {
      try {
        finish({ ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      } catch {
        finish({ ok: false, reason: 'invalid_json' });
      }
    };
    const onError = (): void => finish({ ok: false, reason: 'aborted' });
    if (Number.isFinite(declared) && declared > maxBytes) return finish({ ok: false, reason: 'too_large' });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onError);
  });
}
