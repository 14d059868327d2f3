import type { Finding, ResumeOutcome } from '../../src/model/finding.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { CorrelationEngine } from '../../src/correlate/correlation-engine.js';
import type { EngineOptions } from '../../src/correlate/engine-options.js';
import type { DropReason } from '../../src/correlate/types.js';

/** An engine on a manual clock that records everything its listener hears. */
export function harness(options: Partial<EngineOptions> = {}, startMs = 1_900_000_000_000) {
  let now = startMs;
  const h = {
    findings: [] as Finding[],
    updates: [] as Finding[],
    resolved: [] as Finding[],
    lags: [] as number[],
    resumes: [] as Array<{ outcome: ResumeOutcome; service: string; traceId: string }>,
    drops: new Map<DropReason, number>(),
    engine: undefined as unknown as CorrelationEngine,
    now: () => now,
    /** Moves the clock and ticks. */
    advance(ms: number): void {
      now += ms;
      h.engine.tick();
    },
    ingest(spans: SpanRecord[]): void {
      h.engine.ingest(spans);
    },
    kinds(): string[] {
      return h.findings.map((f) => f.kind).sort();
    },
  };
  h.engine = new CorrelationEngine(
    { now: () => now },
    {
      onFinding: (f, isNew, info) => {
        (isNew ? h.findings : h.updates).push(f);
        if (isNew && info !== undefined) h.lags.push(info.lagMs);
      },
      onFindingResolved: (f) => h.resolved.push(f),
      onResume: (outcome, service, traceId) => h.resumes.push({ outcome, service, traceId }),
      onDrop: (reason, n) => h.drops.set(reason, (h.drops.get(reason) ?? 0) + n),
    },
    options,
  );
  return h;
}

/** Deterministic shuffle (mulberry32) so a failing order can be replayed. */
export function shuffled<T>(xs: T[], seed: number): T[] {
  const out = [...xs];
  let a = seed >>> 0;
  const rnd = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

type SavedChange = ReturnType<CorrelationEngine['takeDirty']>[number];

/**
 * What a store keeps of `takeDirty`'s output, in memory: per key the whole state and the chunks
 * appended since, applied as open-store.ts applies them.
 */
export class SavedStates {
  readonly byKey = new Map<string, { state: string | Uint8Array; log: Uint8Array[] }>();
  /** The changes of the last {@link apply}. */
  last: SavedChange[] = [];

  apply(changes: SavedChange[]): this {
    this.last = changes;
    for (const c of changes) {
      if (c.state === null) this.byKey.delete(c.key);
      else if (c.state !== undefined) this.byKey.set(c.key, { state: c.state, log: [] });
      if (c.log !== undefined) {
        const row = this.byKey.get(c.key);
        if (row === undefined) throw new Error(`chunks for ${c.key} without a state`);
        row.log.push(...c.log);
      }
    }
    return this;
  }

  /** Restores every saved session into `engine`. */
  restoreInto(engine: CorrelationEngine): void {
    for (const [key, row] of this.byKey) engine.restore(key, row.state, row.log);
  }
}
