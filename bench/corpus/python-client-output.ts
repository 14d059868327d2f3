import type { CallRecord } from '../../src/demo/types.js';
import type { TappedEvent } from '../../src/demo/wire-tap.js';

/** What bench/corpus/python_client.py printed, read. */
export interface PythonClientOutput {
  /** It printed `{"initialized": true}` (the session's initialize was answered). */
  initialized: boolean;
  /** Attempts settled so far, in the order their lines came. */
  settled: Array<{ attempt: number; outcome: string }>;
  /** Its final summary, when it printed one. */
  summary?: {
    calls: CallRecord[];
    /** `(session id, event id)` the app's naive dedup dropped; `null`: the app has no dedup (guarded). */
    droppedByDedup: Array<{ sessionId: string; eventId: string }> | null;
    forks: Array<{ kind: string; message: string; atMs: number }>;
  };
}

const OUTCOMES: ReadonlySet<string> = new Set(['result', 'timeout', 'error', 'pending']);

/**
 * Reads the Python client's stdout (one JSON object a line; other lines ignored) into calls the
 * labeler reads: `result`, `timeout` (the SDK's own request timeout), `error`, or `pending` when
 * the summary says so or never came for a call.
 */
export function parsePythonClientOutput(stdout: string): PythonClientOutput {
  const out: PythonClientOutput = { initialized: false, settled: [] };
  for (const line of stdout.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(t) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (o.initialized === true) out.initialized = true;
    else if (typeof o.settled === 'number' && typeof o.outcome === 'string') out.settled.push({ attempt: o.settled, outcome: o.outcome });
    else if (Array.isArray(o.calls)) {
      const calls = (o.calls as Array<Record<string, unknown>>).map((c): CallRecord => {
        const outcome = typeof c.outcome === 'string' && OUTCOMES.has(c.outcome) ? (c.outcome as CallRecord['outcome']) : 'pending';
        const rec: CallRecord = { attempt: Number(c.attempt), startedAtMs: Number(c.started_ms ?? 0), outcome, progress: Number(c.progress ?? 0) };
        if (typeof c.settled_ms === 'number') {
          rec.settledAtMs = c.settled_ms;
          rec.durationMs = c.settled_ms - rec.startedAtMs;
        }
        const e = c.error as Record<string, unknown> | undefined;
        if (e !== undefined) {
          rec.error = { source: 'call', name: String(e.name ?? 'Error'), message: String(e.message ?? '') };
          if (typeof e.code === 'number') rec.error.code = e.code;
          if (typeof e.kind === 'string') rec.error.kind = e.kind;
        }
        return rec;
      });
      const dropped = o.dropped_by_dedup;
      out.summary = {
        calls,
        droppedByDedup: Array.isArray(dropped)
          ? (dropped as Array<Record<string, unknown>>).map((d) => ({ sessionId: String(d.session_id ?? ''), eventId: String(d.event_id ?? '') }))
          : null,
        forks: Array.isArray(o.forks)
          ? (o.forks as Array<Record<string, unknown>>).map((f) => ({ kind: String(f.kind ?? 'unknown'), message: String(f.message ?? ''), atMs: Number(f.at_ms ?? 0) }))
          : [],
      };
    }
  }
  return out;
}

/**
 * Each event the app's dedup dropped, matched to the wire event it was: the n-th drop of a
 * `(session id, event id)` is that pair's (n+1)-th arrival on the wire (the first was passed on).
 */
export function droppedOnWire(dropped: ReadonlyArray<{ sessionId: string; eventId: string }>, events: readonly TappedEvent[]): Array<{ eventId: string; event?: TappedEvent }> {
  const drops = new Map<string, number>();
  return dropped.map((d) => {
    const key = `${d.sessionId}\u0000${d.eventId}`;
    const n = (drops.get(key) ?? 0) + 1;
    drops.set(key, n);
    const event = events.filter((e) => `${e.sessionId ?? ''}\u0000${e.eventId}` === key)[n];
    return event === undefined ? { eventId: d.eventId } : { eventId: d.eventId, event };
  });
}
