/**
 * Re-reads the callgrind dumps that `INSTR_KEEP=1 npm run bench -- instructions` kept, with the
 * bench's current split into compiler, GC and the rest: runs measured before a change of that
 * split are compared with later ones on the same terms, without re-running valgrind.
 *
 *   node build/bench/instruction-dumps.js SHORT LONG BASE.1 BASE.2 [OTHER.1 OTHER.2 ...]
 *
 * Per pair of window dumps (SHORT and LONG calls): instructions per call in total, without V8's
 * compiler and deoptimizer, and without them and the GC, and JIT-compiled JavaScript alone; each
 * pair after the first also as a ratio over the first (the uninstrumented run). Also without
 * compilation counted inclusively from V8's compile entry points and without the GC
 * ({@link compileInclusiveInstructions}): a window that caught a burst of recompiles pays, besides
 * the compiler's own functions, its helpers under no compiler name (one progress-store run of
 * 2026-12-04: +3.6 M compiler instructions per call, and +0.1 M in `std::` trees, `memset` and
 * maps outside the pattern), which this figure leaves out and the pattern's does not.
 */
import { windowFigures, type WindowFigures } from './window-figures.js';

const [shortArg, longArg, ...files] = process.argv.slice(2);
const calls = Number(longArg) - Number(shortArg);
if (!(calls > 0) || files.length < 2 || files.length % 2 !== 0) {
  console.error('usage: instruction-dumps.js SHORT LONG A.1 A.2 [B.1 B.2 ...]');
  process.exit(2);
}

const m = (n: number): string => (n / 1e6).toFixed(3);
const pct = (a: number, b: number): string => `${a / b - 1 >= 0 ? '+' : ''}${((a / b - 1) * 100).toFixed(1)} %`;
let base: WindowFigures | undefined;
for (let i = 0; i < files.length; i += 2) {
  const r = windowFigures(files[i]!, files[i + 1]!, calls);
  base ??= r;
  const vs = r === base ? '' : ` | over the first: ${pct(r.total, base.total)}, ${pct(r.noJit, base.noJit)}, ${pct(r.noJitNoGc, base.noJitNoGc)}, ${pct(r.noCompileNoGc, base.noCompileNoGc)}; JIT-compiled JavaScript ${r.js - base.js >= 0 ? '+' : ''}${m(r.js - base.js)} M`;
  console.log(`${files[i]}: ${m(r.total)} M/call, without compiler ${m(r.noJit)} M, without compiler and GC ${m(r.noJitNoGc)} M, without compilation (inclusive) and GC ${m(r.noCompileNoGc)} M, GC ${m(r.gc)} M, JIT-compiled JavaScript ${m(r.js)} M${vs}`);
}
