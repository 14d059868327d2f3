import * as crypto from 'node:crypto';

const { createHash } = crypto;
/** One-shot crypto.hash (Node >= 20.12, 21.7): no Hash object per digest. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex' | 'latin1') => string }).hash;

/** Hex characters kept of the session key digest (128 bits). */
export const SESSION_KEY_HEX_CHARS = 32;
/** Hex characters kept of a payload digest (64 bits). */
export const PAYLOAD_DIGEST_HEX_CHARS = 16;
/** Session keys memoised per salt; ids repeat on every request of a session. */
const CACHE_LIMIT = 4096;
/** Ids longer than this (chars) are hashed every time rather than cached. */
const CACHE_MAX_ID_CHARS = 1024;

const caches = new Map<string, Map<string, string>>();

/**
 * `forkwatch.session.key`: the first 32 hex chars of SHA-256(salt || id). The raw id is a bearer
 * credential; every client and server of a fleet must share the salt so both derive one key.
 */
export function sessionKey(sessionId: string, salt: string): string {
  let cache = caches.get(salt);
  if (!cache) {
    cache = new Map();
    caches.set(salt, cache);
  }
  const hit = cache.get(sessionId);
  if (hit !== undefined) return hit;
  const key = createHash('sha256').update(salt, 'utf8').update(sessionId, 'utf8').digest('hex').slice(0, SESSION_KEY_HEX_CHARS);
  // A hostile, huge id (a 10 MB header) must not be retained by the cache.
  if (sessionId.length > CACHE_MAX_ID_CHARS) return key;
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(sessionId, key);
  return key;
}

/** `forkwatch.sse.payload.digest`: first 16 hex chars of SHA-256 of the SSE data field. */
export function payloadDigest(data: string): string {
  return sha256Hex(data).slice(0, PAYLOAD_DIGEST_HEX_CHARS);
}

/** SHA-256 of `data` (UTF-8), 64 lowercase hex chars. */
export function sha256Hex(data: string): string {
  return oneShot !== undefined ? oneShot('sha256', data, 'hex') : createHash('sha256').update(data, 'utf8').digest('hex');
}

/**
 * SHA-256 of `data` (UTF-8) as 32 chars, one per byte (latin1): what a caller that reads the
 * digest's bits takes them from with charCodeAt, where the hex form cost 64 chars, two slices and
 * two `parseInt(_, 16)` (a V8 runtime call each) per SSE event.
 */
export function sha256Bytes(data: string): string {
  return oneShot !== undefined ? oneShot('sha256', data, 'latin1') : createHash('sha256').update(data, 'utf8').digest('binary');
}
