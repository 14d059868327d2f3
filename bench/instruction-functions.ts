/**
 * Where two variants of `npm run bench -- instructions` differ, function by function: reads the
 * callgrind dumps that `INSTR_KEEP=1` kept (two windows per run) and prints, per call, the
 * functions whose own instructions differ most between the first variant (A) and the second (B).
 *
 *   node build/bench/instruction-functions.js SHORT LONG A.1 A.2 B.1 B.2 [TOP]
 *
 * V8's optimizing compiler and deoptimizer and its GC are summed as one line each (the bench's
 * categories: {@link JIT_FUNCTION}, {@link GC_FUNCTION}), not listed; JIT-compiled JavaScript is one
 * line too, because its addresses differ between processes (name it with `perf --perf-basic-prof`).
 * Also printed: the inclusive cost of capturing error stacks (`Isolate::CaptureAndSetErrorStack`,
 * the SDK's zod errors capture ~45 per progress call), which moves with the tier of the frames it
 * walks, part of it under the deoptimizer's names (inlined frames are read through
 * `TranslatedState`), so it overlaps the categories and is shown apart, not subtracted.
 */
import { readFileSync } from 'node:fs';
import { dumpCosts } from './callgrind-costs.js';
import { GC_FUNCTION, JIT_FUNCTION } from './instruction-count.js';

const STACK_CAPTURE = 'Isolate::CaptureAndSetErrorStack';
const JS_CODE = /^0x[0-9a-f]+(?:'\d+)?$/;

interface VariantCosts {
  byFunction: Map<string, number>;
  compiler: number;
  gc: number;
  js: number;
  stackCapture: number;
}

/** Per call (LONG window - SHORT window) / calls of one run's pair of dumps. */
function perCall(shortDump: string, longDump: string, calls: number): VariantCosts {
  const read = (file: string): VariantCosts => {
    const { self, calledInclusive } = dumpCosts(readFileSync(file, 'utf8'), 'fn');
    const v: VariantCosts = { byFunction: new Map(), compiler: 0, gc: 0, js: 0, stackCapture: 0 };
    for (const [name, n] of self) {
      if (JIT_FUNCTION.test(name)) v.compiler += n;
      else if (GC_FUNCTION.test(name)) v.gc += n;
      else if (JS_CODE.test(name)) v.js += n;
      else v.byFunction.set(name, (v.byFunction.get(name) ?? 0) + n);
    }
    for (const [name, n] of calledInclusive) if (name.includes(STACK_CAPTURE)) v.stackCapture += n;
    return v;
  };
  const s = read(shortDump);
  const l = read(longDump);
  const byFunction = new Map<string, number>();
  for (const name of new Set([...s.byFunction.keys(), ...l.byFunction.keys()])) byFunction.set(name, ((l.byFunction.get(name) ?? 0) - (s.byFunction.get(name) ?? 0)) / calls);
  const d = (k: 'compiler' | 'gc' | 'js' | 'stackCapture'): number => (l[k] - s[k]) / calls;
  return { byFunction, compiler: d('compiler'), gc: d('gc'), js: d('js'), stackCapture: d('stackCapture') };
}

const [shortArg, longArg, a1, a2, b1, b2, topArg] = process.argv.slice(2);
const calls = Number(longArg) - Number(shortArg);
if (!(calls > 0) || !a1 || !a2 || !b1 || !b2) {
  console.error('usage: instruction-functions.js SHORT LONG A.1 A.2 B.1 B.2 [TOP]');
  process.exit(2);
}
const top = Number(topArg ?? 40);
const A = perCall(a1, a2, calls);
const B = perCall(b1, b2, calls);
const rest = (v: VariantCosts): number => [...v.byFunction.values()].reduce((x, y) => x + y, 0);
const k = (n: number): string => `${n >= 0 ? '+' : ''}${Math.round(n / 1000).toLocaleString('en')} k`;
const m = (n: number): string => (n / 1e6).toFixed(3);
console.log(`instructions per call (M), A = ${a2}, B = ${b2}`);
console.log(`  ${'A'.padStart(8)} ${'B'.padStart(8)}  B - A`);
for (const [label, x, y] of [
  ['native code outside the compiler and GC', rest(A), rest(B)],
  ['JIT-compiled JavaScript', A.js, B.js],
  ["V8's compiler and deoptimizer", A.compiler, B.compiler],
  ["V8's GC", A.gc, B.gc],
  ['(error stack captures, inclusive, overlapping the above)', A.stackCapture, B.stackCapture],
] as const) console.log(`  ${m(x).padStart(8)} ${m(y).padStart(8)}  ${k(y - x).padStart(8)}  ${label}`);
console.log(`\nthe ${top} functions (own instructions, outside compiler, GC and JIT code) differing most, per call:`);
const names = new Set([...A.byFunction.keys(), ...B.byFunction.keys()]);
const diffs = [...names].map((name) => ({ name, a: A.byFunction.get(name) ?? 0, b: B.byFunction.get(name) ?? 0 })).sort((x, y) => Math.abs(y.b - y.a) - Math.abs(x.b - x.a));
for (const { name, a, b } of diffs.slice(0, top)) console.log(`  ${k(b - a).padStart(8)}  (${k(a).replace('+', '')} -> ${k(b).replace('+', '')})  ${name.length > 140 ? `${name.slice(0, 137)}...` : name}`);
