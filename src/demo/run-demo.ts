import type { TracerProvider } from '@opentelemetry/api';
import { runSeedScenario } from './seed-scenario.js';
import { formatScenarioResult } from './format-scenario.js';
import type { ScenarioResult, SeedScenarioOptions } from './types.js';

export interface RunDemoOptions {
  /**
   * Tracer providers of the demo's server and client (e.g. exporting OTLP to a local detector,
   * each with its own `service.name`). Default none: the runs are not instrumented.
   */
  tracerProviders?: { server?: TracerProvider; client?: TracerProvider };
  /** FORKWATCH_SESSION_SALT shared by both sides. Default ''. */
  salt?: string;
  /** Multiplies every scenario timer. Default 1. */
  scale?: number;
  /** Where lines go. Default `console.log`. */
  print?: (line: string) => void;
  /** Extra scenario options applied to both runs (timers). Default none. */
  overrides?: Partial<SeedScenarioOptions>;
}

/**
 * The `forkwatch demo` sequence: the seed against the naive server with the stock SDK client and
 * the app's naive dedup (it forks: a lost result and hung calls), then against the guarded server
 * with forkwatch's guarded client (404, re-initialize, retry, result). Narrates each step and
 * prints a summary per run; returns both results.
 */
export async function runDemo(opts: RunDemoOptions = {}): Promise<{ naive: ScenarioResult; guarded: ScenarioResult }> {
  const print = opts.print ?? ((line: string) => console.log(line));
  const base = {
    ...opts.overrides,
    scale: opts.scale,
    salt: opts.salt,
    tracerProviders: opts.tracerProviders,
    onStep: (s: { atMs: number; what: string }) => print(`  ${String(s.atMs).padStart(5)} ms  ${s.what}`),
  };
  print('1/2  the seed against a naive server (rehydrates unknown sessions) and the stock SDK client');
  const naive = await runSeedScenario({ ...base, server: 'naive', client: 'stock' });
  for (const line of formatScenarioResult(naive)) print(line);
  print('');
  print('2/2  the same sequence against forkwatch\'s guarded server and guarded client');
  const guarded = await runSeedScenario({ ...base, server: 'guarded', client: 'guarded' });
  for (const line of formatScenarioResult(guarded)) print(line);
  return { naive, guarded };
}
