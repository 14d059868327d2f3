import { encodeFindingsCursor } from '../storage/findings-cursor.js';

import { createError } from '../errors.js';
import { API_V1 } from './api-finding-json.js';

/** Query parameter that makes a replica answer from its own store only (what a fan-out asks peers). */
export const LOCAL_SCOPE_PARAM = 'scope';
export const LOCAL_SCOPE_VALUE = 'local';
/**
 * Header on every fan-out request: a replica that sees it answers from its own store, whatever the
 * request target says, so a fan-out never recurses (a `#` or an odd target cannot drop it, unlike
 * the query parameter, which is still sent for replicas of older versions).
 */
export const FAN_OUT_HEADER = 'x-forkwatch-fan-out';

/** Largest peer answer read, bytes: reading stops there; a page of MAX_PAGE_SIZE findings is far below it. */
export const MAX_PEER_ANSWER_BYTES = 16 * 1024 * 1024;

/** The findings query parameters passed on to peers (as the client sent them, after validation). */
const FINDINGS_PARAMS = ['kind', 'service', 'since', 'limit', 'cursor'] as const;

export interface PeerOptions {
  /** Other replicas' API base URLs (`http://detector-2:9464`), no trailing slash. */
  urls: string[];
  /** How long one peer may take before it is named unavailable, ms. */
  timeoutMs: number;
  /** The bearer token sent to peers (the replicas of one deployment share it). */
  authToken?: string;
  /** Largest answer read from one peer, bytes. Default {@link MAX_PEER_ANSWER_BYTES}. */
  maxAnswerBytes?: number;
}

/** A replica that did not answer a fan-out, as named in the answer. */
export interface UnavailableReplica {
  replica: string;
  reason: string;
}

/** One peer's answer: its HTTP status and parsed JSON body, or why there is none. */
export type PeerAnswer = { replica: string; status: number; body: unknown } | { replica: string; error: string };

/**
 * A path and query asked of every peer, built only by {@link peerFindingsTarget} or
 * {@link peerSessionTarget}: fixed path templates and encoded, validated parts, never the
 * client's raw request target (a raw `\..\` in it would reach another path of the peer with
 * this replica's token).
 */
export interface PeerTarget {
  readonly pathname: string;
  readonly search: string;
}

/** True when the request is itself a fan-out (header or `scope=local`): answer from this store only. */
export function isFanOutRequest(headers: Record<string, unknown>, query: unknown): boolean {
  if (headers[FAN_OUT_HEADER] !== undefined) return true;
  const q = query as Record<string, unknown> | null | undefined;
  return typeof q === 'object' && q !== null && q[LOCAL_SCOPE_PARAM] === LOCAL_SCOPE_VALUE;
}

/** `GET /api/v1/findings` for peers: the known parameters of an already validated query, plus `scope=local`. */
export function peerFindingsTarget(query: Record<string, unknown>): PeerTarget {
  const params = new URLSearchParams();
  for (const name of FINDINGS_PARAMS) {
    const v = query[name];
    for (const item of Array.isArray(v) ? v : [v]) if (typeof item === 'string') params.append(name, item);
  }
  params.set(LOCAL_SCOPE_PARAM, LOCAL_SCOPE_VALUE);
  return { pathname: `${API_V1}/findings`, search: `?${params.toString()}` };
}

/**
 * Throws FORKWATCH_ERR_BAD_QUERY for a session key no replica can hold and a URL would resolve
 * elsewhere: empty, `.`/`..`, or with a slash, a backslash or a control character.
 */
export function checkSessionKey(key: string): void {
  // eslint-disable-next-line no-control-regex
  if (key === '' || key === '.' || key === '..' || /[\\/\u0000-\u001f\u007f]/.test(key) || key.length > 512) {
    throw createError('FORKWATCH_ERR_BAD_QUERY', `session key ${JSON.stringify(key.slice(0, 64))} is not a session key (no slashes, backslashes, dot segments or control characters)`);
  }
}

/** `GET /api/v1/sessions/:key` for peers: the key checked and percent-encoded into the fixed template. */
export function peerSessionTarget(key: string): PeerTarget {
  checkSessionKey(key);
  return { pathname: `${API_V1}/sessions/${encodeURIComponent(key)}`, search: `?${LOCAL_SCOPE_PARAM}=${LOCAL_SCOPE_VALUE}` };
}

/** The peer URL of `target`, or an error when URL parsing would move it off the template. */
function peerUrl(replica: string, target: PeerTarget): URL | string {
  const base = new URL(replica);
  const url = new URL(`${replica}${target.pathname}${target.search}`);
  const want = `${base.pathname.replace(/\/$/, '')}${target.pathname}`;
  if (url.origin !== base.origin || url.pathname !== want || url.hash !== '') return `refused: ${target.pathname} does not stay on its path`;
  return url;
}

/**
 * GETs `target` from every peer at once, each bounded by `timeoutMs`, marked as a fan-out
 * ({@link FAN_OUT_HEADER}). Redirects are never followed (a peer that redirects is unavailable:
 * following one would carry the request, and maybe the token, elsewhere), and an answer is read
 * only up to `maxAnswerBytes`, then the connection is dropped. Never rejects: a peer that fails
 * is an `{ error }` entry.
 */
export function askPeers(peers: PeerOptions, target: PeerTarget): Promise<PeerAnswer[]> {
  const headers: Record<string, string> = { accept: 'application/json', [FAN_OUT_HEADER]: '1' };
  if (peers.authToken) headers.authorization = `Bearer ${peers.authToken}`;
  const maxBytes = peers.maxAnswerBytes ?? MAX_PEER_ANSWER_BYTES;
  return Promise.all(
    peers.urls.map(async (replica): Promise<PeerAnswer> => {
      const abort = new AbortController();
      try {
        const url = peerUrl(replica, target);
        if (typeof url === 'string') return { replica, error: url };
        const res = await fetch(url, { headers, redirect: 'manual', signal: AbortSignal.any([abort.signal, AbortSignal.timeout(peers.timeoutMs)]) });
        if (res.status >= 300 && res.status < 400) {
          abort.abort();
          return { replica, error: `HTTP ${res.status}: redirects are not followed` };
        }
        const text = await readCapped(res, maxBytes);
        if (text === undefined) {
          abort.abort();
          return { replica, error: `answer over ${maxBytes} bytes` };
        }
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          return { replica, error: `HTTP ${res.status}, not JSON` };
        }
        return { replica, status: res.status, body };
      } catch (err) {
        const e = err as Error;
        return { replica, error: e.name === 'TimeoutError' ? `no answer within ${peers.timeoutMs} ms` : `${e.name}: ${e.message}`.slice(0, 200) };
      }
    }),
  );
}

/** The body as text, or undefined as soon as it passes `maxBytes` (reading stops there). */
async function readCapped(res: Response, maxBytes: number): Promise<string | undefined> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (res.body === null) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

interface FindingLike {
  id: string;
  detectedAtMs: number;
}

interface FindingsPageLike<F extends FindingLike> {
  items: F[];
  nextCursor: string | null;
}

/** True for a `{ items: [...], nextCursor }` body whose items carry `id` and `detectedAtMs`. */
export function isFindingsPage(body: unknown): body is FindingsPageLike<FindingLike> {
  const b = body as FindingsPageLike<FindingLike> | null;
  return (
    typeof b === 'object' &&
    b !== null &&
    Array.isArray(b.items) &&
    b.items.every((f) => typeof f === 'object' && f !== null && typeof f.id === 'string' && Number.isSafeInteger(f.detectedAtMs))
  );
}

/**
 * Merges pages that each replica answered for the same query and cursor. The cursor is keyed on
 * the last item in (detectedAtMs DESC, id ASC) order, the order every replica pages in, so the
 * first `limit` of the merge are exactly the first `limit` of the union, and the cursor of the
 * last one taken continues every replica's listing at once. A finding on two replicas (a session
 * split by a rescale) is listed once.
 */
export function mergeFindingPages<F extends FindingLike>(pages: FindingsPageLike<F>[], limit: number): FindingsPageLike<F> {
  const byId = new Map<string, F>();
  for (const page of pages) for (const f of page.items) if (!byId.has(f.id)) byId.set(f.id, f);
  const all = [...byId.values()].sort((a, b) => b.detectedAtMs - a.detectedAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const items = all.slice(0, limit);
  const more = all.length > limit || pages.some((p) => p.nextCursor !== null);
  const last = items[items.length - 1];
  return { items, nextCursor: more && last ? encodeFindingsCursor({ detectedAtMs: last.detectedAtMs, id: last.id }) : null };
}
