/**
 * `npm run bench -- promises`: async resources (promises above all) each variant of the
 * instruction bench creates per tool call, counted exactly by an async_hooks init hook
 * (bench/async-init-counter.ts) over N calls after a warm-up, one child process per variant,
 * no valgrind (seconds per variant). Under NodeSDK's context manager each of them pays Node 20's
 * promise hooks: this says how many of those the instrumentation adds.
 *
 * Environment: PROMISES_APP (echo or progress-store, default progress-store), PROMISES_SIDES
 * (comma list, default none,both,sdk-only,sdk-explicit,zero-code), PROMISES_WARMUP (default
 * 300), PROMISES_N (default 500).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { otlpSink, type BenchApp } from './instrumentation.js';
import { variantProcess, type CountedSides } from './variant-process.js';

export interface AsyncInitsRow {
  sides: CountedSides;
  /** Async resources created per call, by async_hooks type (PROMISE, TickObject, Timeout, ...). */
  perCall: Record<string, number>;
}

/** Runs each variant in a child of its own and returns its async resources per call. */
export async function benchPromisesPerCall(onRow: (row: AsyncInitsRow) => void = () => undefined): Promise<AsyncInitsRow[]> {
  const app = (process.env.PROMISES_APP ?? 'progress-store') as BenchApp;
  const sides = (process.env.PROMISES_SIDES ?? 'none,both,sdk-only,sdk-explicit,zero-code').split(',').map((s) => s.trim()) as CountedSides[];
  const warmup = process.env.PROMISES_WARMUP ?? '300';
  const n = process.env.PROMISES_N ?? '500';
  const script = fileURLToPath(new URL('./one-variant.js', import.meta.url));
  const counter = new URL('./async-init-counter.js', import.meta.url).href;
  const rows: AsyncInitsRow[] = [];
  for (const variant of sides) {
    const sink = await otlpSink();
    try {
      // The delay as under valgrind: no request outlives it, in any variant.
      const { importArgs, env } = variantProcess(variant, sink.url, 100_000);
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--expose-gc', ...importArgs, '--import', counter, script], {
          env: { ...process.env, ...env, APP: app, WARMUP: warmup, N: n, MARK_TIMED: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let text = '';
        child.stdout.on('data', (d: Buffer) => (text += d.toString()));
        child.stderr.on('data', (d: Buffer) => (text += d.toString()));
        child.on('error', reject);
        child.on('close', () => (text.includes('RUN_OK') ? resolve(text) : reject(new Error(`${variant} failed:\n${text.slice(-2000)}`))));
      });
      const line = out.split('\n').find((l) => l.startsWith('ASYNC_INITS '));
      if (line === undefined) throw new Error(`${variant}: no ASYNC_INITS line`);
      const row: AsyncInitsRow = { sides: variant, perCall: JSON.parse(line.slice('ASYNC_INITS '.length)) as Record<string, number> };
      rows.push(row);
      onRow(row);
    } finally {
      await sink.close();
    }
  }
  return rows;
}
