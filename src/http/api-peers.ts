import { encodeFindingsCursor } from '../storage/findings-cursor.js';

/** Query parameter that makes a replica answer from its own store only (what a fan-out asks peers). */
export const LOCAL_SCOPE_PARAM = 'scope';
export const LOCAL_SCOPE_VALUE = 'local';

/** Largest peer answer read, bytes; a page of MAX_PAGE_SIZE findings is far below it. */
export const MAX_PEER_ANSWER_BYTES = 16 * 1024 * 1024;

export interface PeerOptions {
  /** Other replicas' API base URLs (`http://detector-2:9464`), no trailing slash. */
  urls: string[];
  /** How long one peer may take before it is named unavailable, ms. */
  timeoutMs: number;
  /** The bearer token sent to peers (the replicas of one deployment share it). */
  authToken?: string;
}

/** A replica that did not answer a fan-out, as named in the answer. */
export interface UnavailableReplica {
  replica: string;
  reason: string;
}

/** One peer's answer: its HTTP status and parsed JSON body, or why there is none. */
export type PeerAnswer = { replica: string; status: number; body: unknown } | { replica: string; error: string };

/**
 * GETs `pathAndQuery` (already carrying `scope=local`) from every peer at once, each bounded by
 * `timeoutMs`. Never rejects: a peer that fails is an `{ error }` entry.
 */
export function askPeers(peers: PeerOptions, pathAndQuery: string): Promise<PeerAnswer[]> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (peers.authToken) headers.authorization = `Bearer ${peers.authToken}`;
  return Promise.all(
    peers.urls.map(async (replica): Promise<PeerAnswer> => {
      try {
        const res = await fetch(`${replica}${pathAndQuery}`, { headers, signal: AbortSignal.timeout(peers.timeoutMs) });
        const text = await res.text();
        if (text.length > MAX_PEER_ANSWER_BYTES) return { replica, error: `answer over ${MAX_PEER_ANSWER_BYTES} bytes` };
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

/** Adds `scope=local` to the query of a request URL (path plus optional query). */
export function localScopeUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  params.set(LOCAL_SCOPE_PARAM, LOCAL_SCOPE_VALUE);
  return `${path}?${params.toString()}`;
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
