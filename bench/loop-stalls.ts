/**
 * What held a detector's event loop between two scrapes of its /metrics (prom-client's process
 * families, which `serve` registers): the loop's delay (`nodejs_eventloop_lag_*`, whose monitor
 * prom-client resets at every scrape, so the second scrape covers what happened since the first)
 * and the collector's pauses by kind (`nodejs_gc_duration_seconds`). A finding decided late with
 * the loop free points elsewhere; a late one beside a long pause is explained by it.
 */

export interface LoopStalls {
  /** Longest and 99th-percentile delay of the loop since the first scrape, ms. */
  loopMaxMs: number;
  loopP99Ms: number;
  /** Pauses of the collector by kind (major, minor, incremental, weakcb): count, total ms, and the upper bound of the longest one's bucket, ms. */
  gc: Map<string, { count: number; totalMs: number; longestBelowMs: number }>;
}

function gauge(metrics: string, name: string): number {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(metrics);
  return m === null ? NaN : Number(m[1]);
}

/** Per kind: `le` -> cumulative count, and the sum in seconds. */
function gcByKind(metrics: string): Map<string, { buckets: Map<number, number>; sum: number }> {
  const out = new Map<string, { buckets: Map<number, number>; sum: number }>();
  const of = (kind: string): { buckets: Map<number, number>; sum: number } => {
    let k = out.get(kind);
    if (k === undefined) out.set(kind, (k = { buckets: new Map(), sum: 0 }));
    return k;
  };
  for (const m of metrics.matchAll(/^nodejs_gc_duration_seconds_bucket\{(?=[^}]*kind="([^"]+)")[^}]*le="([^"]+)"[^}]*\} (\S+)$/gm)) {
    of(m[1]!).buckets.set(m[2] === '+Inf' ? Infinity : Number(m[2]), Number(m[3]));
  }
  for (const m of metrics.matchAll(/^nodejs_gc_duration_seconds_sum\{[^}]*kind="([^"]+)"[^}]*\} (\S+)$/gm)) of(m[1]!).sum = Number(m[2]);
  return out;
}

/** The stalls between scrape `before` and scrape `after` of one detector. */
export function loopStalls(before: string, after: string): LoopStalls {
  const gc = new Map<string, { count: number; totalMs: number; longestBelowMs: number }>();
  const b = gcByKind(before);
  for (const [kind, a] of gcByKind(after)) {
    const was = b.get(kind);
    const les = [...a.buckets.keys()].sort((x, y) => x - y);
    const delta = les.map((le) => (a.buckets.get(le) ?? 0) - (was?.buckets.get(le) ?? 0));
    const count = delta[delta.length - 1] ?? 0;
    if (count === 0) continue;
    // The smallest bound whose cumulative count holds every pause: the longest is below it.
    const i = delta.findIndex((c) => c === count);
    gc.set(kind, { count, totalMs: (a.sum - (was?.sum ?? 0)) * 1000, longestBelowMs: les[i]! * 1000 });
  }
  return { loopMaxMs: gauge(after, 'nodejs_eventloop_lag_max_seconds') * 1000, loopP99Ms: gauge(after, 'nodejs_eventloop_lag_p99_seconds') * 1000, gc };
}

/** One line: `loop delay max 12 ms (p99 3 ms); GC major 4 (310 ms, each < 100 ms), minor 230 (...)`. */
export function formatStalls(s: LoopStalls): string {
  const kinds = [...s.gc].map(([k, g]) => `${k} ${g.count} (${g.totalMs.toFixed(0)} ms, each < ${g.longestBelowMs} ms)`);
  return `loop delay max ${s.loopMaxMs.toFixed(0)} ms (p99 ${s.loopP99Ms.toFixed(1)} ms); GC ${kinds.join(', ') || 'none'}`;
}
