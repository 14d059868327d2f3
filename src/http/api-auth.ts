import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * True when an `Authorization` header carries `Bearer <token>`. Compares digests so the time
 * taken reveals neither the token nor its length.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  if (typeof header !== 'string') return false;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  if (!m) return false;
  const got = createHash('sha256').update(m[1]!, 'utf8').digest();
  const want = createHash('sha256').update(token, 'utf8').digest();
  return timingSafeEqual(got, want);
}
