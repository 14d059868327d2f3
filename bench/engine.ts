/**
 * Correlation engine benchmark: ingest throughput on realistic mixed sessions (healthy resumes
 * with a few seed forks) and heap cost of an idle, decided, compacted session.
 * Run: node --expose-gc --import tsx bench/engine.ts
 */
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { CorrelationEngine } from '../src/correlate/correlation-engine.js';
import type { SpanRecord } from '../src/model/span-record.js';
import { ATTR_SESSION_KEY } from '../packages/instrumentation/src/semconv.js';
import { healthyResumeScenario, seedScenario } from '../test/fixtures/scenarios/scenarios.js';

export interface EngineBenchResult {
  spans: number;
  sessions: number;
  /** Spans ingested per second, ingest() alone. */
  ingestSpansPerSec: number;
  /** Spans per second including the ticks that decide every session. */
  endToEndSpansPerSec: number;
  findings: number;
  /** Heap bytes per idle tracked (compacted) session; NaN without --expose-gc. */
  heapBytesPerIdleSession: number;
  idleSessions: number;
}

function templates(): SpanRecord[][] {
  const h = healthyResumeScenario({ sessionId: 'tpl-h' });
  const f = seedScenario({ sessionId: 'tpl-f' });
  return [[...h.server, ...h.client], [...f.server, ...f.client]];
}

/** Copies a template under a new session key, as a decoder would hand fresh objects. */
function instantiate(tpl: SpanRecord[], key: string, n: number): SpanRecord[] {
  const tag = n.toString(16).padStart(8, '0');
  return tpl.map((s) => ({
    ...s,
    traceId: tag + s.traceId.slice(8),
    spanId: tag + s.spanId.slice(8),
    attributes: { ...s.attributes, [ATTR_SESSION_KEY]: key },
  }));
}

/** Heap growth per session after `n` healthy sessions were decided and compacted; NaN without --expose-gc. */
function measureIdleHeap(healthy: SpanRecord[], n: number): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return Number.NaN;
  let t = 1_900_000_000_000;
  const idle = new CorrelationEngine({ now: () => t }, {});
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < n; i++) {
    idle.ingest(instantiate(healthy, keyOf(1_000_000 + i), i));
    if (i % 1000 === 999) idle.takeDirty();
  }
  t += 10_000;
  idle.tick(); // decide
  t += 60_000;
  idle.tick(); // compact
  idle.takeDirty();
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  if (idle.stats().sessions !== n) throw new Error('idle sessions were not all tracked');
  return (after - before) / n;
}

const keyOf = (i: number): string => createHash('sha256').update(`bench-${i}`).digest('hex').slice(0, 32);

/**
 * Measures the engine; `sessions` mixed sessions (default 5000, 1 in `forkEvery` = 100 a seed fork),
 * `idleSessions` (20000) for the heap figure, `batch` spans per ingest call (1000), best of `repeats` (3).
 */
export function benchEngine(opts: { sessions?: number; forkEvery?: number; idleSessions?: number; batch?: number; repeats?: number } = {}): EngineBenchResult {
  const sessions = opts.sessions ?? 5_000;
  const forkEvery = opts.forkEvery ?? 100;
  const idleSessions = opts.idleSessions ?? 20_000;
  const batch = opts.batch ?? 1_000;
  const [healthy, fork] = templates() as [SpanRecord[], SpanRecord[]];

  // Interleave sessions the way a collector's batches mix them.
  const perSession: SpanRecord[][] = [];
  for (let i = 0; i < sessions; i++) perSession.push(instantiate(i % forkEvery === 0 ? fork : healthy, keyOf(i), i));
  const all: SpanRecord[] = [];
  const cursors = perSession.map(() => 0);
  for (let live = perSession.length; live > 0; ) {
    live = 0;
    for (let i = 0; i < perSession.length; i++) {
      const spans = perSession[i]!;
      const c = cursors[i]!;
      if (c < spans.length) {
        all.push(...spans.slice(c, c + 4));
        cursors[i] = c + 4;
        live++;
      }
    }
  }

  // Best of `repeats` fresh engines: the first run pays for JIT warm-up, and shared CI cores are noisy.
  let ingestSec = Infinity;
  let totalSec = Infinity;
  let findings = 0;
  for (let rep = 0; rep < (opts.repeats ?? 3); rep++) {
    let now = 1_900_000_000_000;
    findings = 0;
    const engine = new CorrelationEngine({ now: () => now }, { onFinding: (_f, isNew) => void (isNew && findings++) });
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < all.length; i += batch) engine.ingest(all.slice(i, i + batch));
    const t1 = process.hrtime.bigint();
    now += 10_000;
    engine.tick();
    const t2 = process.hrtime.bigint();
    ingestSec = Math.min(ingestSec, Number(t1 - t0) / 1e9);
    totalSec = Math.min(totalSec, Number(t2 - t0) / 1e9);
  }

  const heapBytesPerIdleSession = measureIdleHeap(healthy, idleSessions);
  return {
    spans: all.length,
    sessions,
    ingestSpansPerSec: Math.round(all.length / ingestSec),
    endToEndSpansPerSec: Math.round(all.length / totalSec),
    findings,
    heapBytesPerIdleSession: Math.round(heapBytesPerIdleSession),
    idleSessions,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const r = benchEngine();
  console.log(JSON.stringify(r, null, 2));
  console.log(
    `ingest ${r.ingestSpansPerSec} spans/s (target >= 200000), with decisions ${r.endToEndSpansPerSec} spans/s; ` +
      `${r.heapBytesPerIdleSession} B per idle session (target < 2048)`,
  );
}
