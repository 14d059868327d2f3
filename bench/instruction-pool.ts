/**
 * Pools the kept callgrind dumps of many runs (`INSTR_KEEP=1 npm run bench -- instructions`, any
 * number of commands) by variant, and states each variant's overhead over the first with its
 * uncertainty. Single runs of one variant lie up to ~3 % apart on progress-store (V8's tiering
 * and where stack captures find baseline frames), about the size of the 3 % goal, so one pair of
 * runs, or the medians of three, do not say on which side of it the instrumentation is.
 *
 *   node build/bench/instruction-pool.js SHORT LONG BASE=P1,P2,... OTHER=Q1,Q2,... [...]
 *
 * P and Q are dump names without the `.1`/`.2` of the windows (what the bench prints before the
 * comma). Per variant and figure: the median and range over its runs; per variant after the
 * first, over the first: the overhead by the medians, the median of the overheads of every pair
 * of runs (one of each variant: Hodges-Lehmann's estimate of a shift, as a ratio), and a 90 %
 * bootstrap interval of the overhead by the medians (runs resampled with replacement within each
 * variant, 10,000 resamples, fixed seed: the same dumps always print the same interval). With
 * fewer than five runs per variant the interval is coarse; it says so.
 */
import { median, ratioOfMediansInterval } from './resample.js';
import { windowFigures, type WindowFigures } from './window-figures.js';

const [shortArg, longArg, ...groupArgs] = process.argv.slice(2);
const calls = Number(longArg) - Number(shortArg);
const groups = groupArgs.map((arg) => {
  const eq = arg.indexOf('=');
  return { label: arg.slice(0, eq), prefixes: arg.slice(eq + 1).split(',').filter((p) => p !== '') };
});
if (!(calls > 0) || groups.length < 2 || groups.some((g) => g.label === '' || g.prefixes.length === 0)) {
  console.error('usage: instruction-pool.js SHORT LONG BASE=P1,P2,... OTHER=Q1,Q2,... (P: a dump name without .1/.2)');
  process.exit(2);
}

/** The figures compared, in the order printed. */
const FIGURES: ReadonlyArray<[keyof WindowFigures, string]> = [
  ['noJitNoGc', 'without compiler and GC (the bench\'s figure)'],
  ['noCompileNoGc', 'without compilation (inclusive) and GC'],
  ['total', 'in total'],
  ['gc', "V8's GC"],
  ['js', 'JIT-compiled JavaScript'],
];

const m = (n: number): string => (n / 1e6).toFixed(3);
const pct = (r: number): string => `${r >= 0 ? '+' : ''}${(r * 100).toFixed(1)} %`;

const measured = groups.map((g) => ({ label: g.label, runs: g.prefixes.map((p) => windowFigures(`${p}.1`, `${p}.2`, calls)) }));
const base = measured[0]!;
console.log(`M instructions per call (${longArg}- minus ${shortArg}-call window), median [lowest, highest] over the runs; overheads over ${base.label}`);
for (const g of measured) {
  console.log(`${g.label}: ${g.runs.length} runs`);
  for (const [key, name] of FIGURES) {
    const xs = g.runs.map((r) => r[key]);
    let line = `  ${name}: ${m(median(xs))} [${m(Math.min(...xs))}, ${m(Math.max(...xs))}]`;
    if (g !== base) {
      const ys = base.runs.map((r) => r[key]);
      if (key === 'js') line += ` | ${median(xs) - median(ys) >= 0 ? '+' : ''}${m(median(xs) - median(ys))} M by the medians`;
      else {
        const pairs = xs.flatMap((x) => ys.map((y) => x / y - 1));
        const { lo, hi } = ratioOfMediansInterval(ys, xs);
        line += ` | ${pct(median(xs) / median(ys) - 1)} by the medians, ${pct(median(pairs))} over every pair of runs, 90 % interval [${pct(lo)}, ${pct(hi)}]`;
      }
    }
    console.log(line);
  }
}
if (measured.some((g) => g.runs.length < 5)) console.log('(fewer than five runs in a variant: the bootstrap interval is coarse)');
