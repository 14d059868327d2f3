import { describeText } from '@forkwatch/instrumentation/wire';
import { requestHeaders, type FetchLike } from './fetch-types.js';
import { rewriteSseResponse } from './sse-rewrite.js';

/** Keys the naive dedup remembers before forgetting its oldest. Default 10 000. */
export const DEFAULT_DEDUP_MAX_KEYS = 10_000;

/** An event the naive dedup discarded. */
export interface DroppedEvent {
  sessionId: string;
  eventId: string;
  /** JSON-RPC kind of the dropped payload (`response` is a lost tool result). */
  kind: string;
  jsonrpcId?: string;
  method?: string;
  at: number;
}

export interface NaiveDedup {
  /** The wrapped fetch, for `StreamableHTTPClientTransport`'s `fetch` option. */
  fetch: FetchLike;
  dropped: DroppedEvent[];
  /** Events passed on to the SDK. */
  delivered: number;
}

/**
 * The app's dedup exactly as the seed's client had it: a fetch wrapper that remembers every
 * `(session id, event id)` it has passed on and silently drops any SSE event whose pair it has
 * seen, rewriting the stream without it. Sound only if event ids never repeat under one session
 * id, which is what a rehydrating server breaks. Bounded to `maxKeys` (oldest forgotten).
 */
export function naiveDedupFetch(inner: FetchLike, maxKeys = DEFAULT_DEDUP_MAX_KEYS): NaiveDedup {
  const seen = new Set<string>();
  const out: NaiveDedup = {
    dropped: [],
    delivered: 0,
    fetch: async (input, init) => {
      const sent = requestHeaders(input, init).get('mcp-session-id') ?? undefined;
      const res = await inner(input, init);
      const sessionId = res.headers.get('mcp-session-id') ?? sent ?? '';
      return rewriteSseResponse(res, (ev) => {
        if (ev.id === undefined) return true;
        const key = `${sessionId}\u0000${ev.id}`;
        if (seen.has(key)) {
          const info = describeText(ev.data)[0] ?? { kind: 'none' as const };
          out.dropped.push({ sessionId, eventId: ev.id, kind: info.kind, jsonrpcId: info.id, method: info.method, at: Date.now() });
          return false;
        }
        seen.add(key);
        if (seen.size > maxKeys) seen.delete(seen.values().next().value as string);
        out.delivered++;
        return true;
      });
    },
  };
  return out;
}
