/**
 * The fleet benchmark's traffic mix, seeded so the instrumented and the plain app run the same
 * calls: most calls answered in well under a second without progress, `FLEET_LONG_SHARE`
 * (default 0.1) long calls of 1.5-4 s with a progress notification every 250 ms.
 */
import { seededRandom } from '../corpus/seeded-random.js';

/** One bulk call: how long the tool works (ms) and its progress notifications (0: none asked). */
export interface PlannedCall {
  ms: number;
  steps: number;
}

/** A seed-scenario run of an app: what was injected, and what the server says happened. */
export interface SeedRun {
  /** Prefix of the run's service names (`<service>-server`, `<service>-client`). */
  service: string;
  injected: 'break' | 'fork';
  /** The server rehydrated the client's session id after reaping it: a fork happened (the label). */
  forked: boolean;
  calls: number;
  resumes: number;
}

/** What one app process did, printed on its `done` line. */
export interface FleetAppResult {
  mode: 'instrumented' | 'plain';
  /** Bulk tool calls answered, and failed (either is a tool call made). */
  bulkCalls: number;
  bulkFailed: number;
  longCalls: number;
  progress: number;
  sessions: number;
  seedRuns: SeedRun[];
  /** Spans the app's exporters were handed (instrumented only): bulk traffic, seed runs, by span name. */
  spans?: { bulk: number; seed: number; byName: Record<string, number> };
}

/** The next bulk call of the mix. */
export function planCall(rnd: () => number, longShare = 0.1): PlannedCall {
  if (rnd() < longShare) {
    const ms = Math.round(1500 + rnd() * 2500);
    return { ms, steps: Math.max(1, Math.round(ms / 250)) };
  }
  // Skewed to short: half under ~100 ms, nearly all under 800 ms.
  return { ms: Math.round(5 + 795 * rnd() ** 3), steps: 0 };
}

/** `breaks` healthy stream cuts and `forks` forks, in a seeded order. */
export function planSeedRuns(breaks: number, forks: number, seed: number): Array<'break' | 'fork'> {
  const plan: Array<'break' | 'fork'> = [...Array<'break'>(breaks).fill('break'), ...Array<'fork'>(forks).fill('fork')];
  const rnd = seededRandom(seed * 31 + 7);
  for (let i = plan.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [plan[i], plan[j]] = [plan[j]!, plan[i]!];
  }
  return plan;
}
