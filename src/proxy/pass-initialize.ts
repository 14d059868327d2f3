import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { sseWithIncarnationMeta, withIncarnationMeta } from './initialize-meta.js';

/**
 * Under `--guard`: the initialize answer, read whole (up to `maxBytes`; a larger one goes out
 * unchanged), with the incarnation added to `_meta` and `content-length` set anew. `done` gets
 * the body as the upstream sent it ('' when it was too large to keep).
 */
export function passInitialize(
  maxBytes: number,
  ures: IncomingMessage,
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  sse: boolean,
  incarnation: string,
  done: (original: string) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let flowing = false;
  ures.on('data', (c: Buffer) => {
    if (flowing) {
      res.write(c);
      return;
    }
    size += c.length;
    chunks.push(c);
    if (size > maxBytes) {
      // Too large to rewrite: out unchanged.
      flowing = true;
      res.writeHead(status, headers);
      for (const b of chunks) res.write(b);
    }
  });
  ures.on('end', () => {
    if (!flowing) {
      const text = Buffer.concat(chunks).toString('utf8');
      const out = sse ? sseWithIncarnationMeta(text, incarnation) : (withIncarnationMeta(text, incarnation) ?? text);
      delete headers['content-length'];
      headers['content-length'] = Buffer.byteLength(out);
      res.writeHead(status, headers);
      res.end(out);
      done(text);
    } else {
      res.end();
      done('');
    }
  });
}
