/**
 * Reading a callgrind dump's costs by function: the parser under the instruction benches'
 * categories (compiler, GC, JIT-compiled JavaScript: bench/instruction-count.ts) and under the
 * per-function comparison of two variants (bench/instruction-functions.ts).
 *
 * The format (valgrind's "Callgrind Format Specification"): `fn=` / `ob=` start a function's or an
 * object's block, names compressed to `(id)` after their first mention; a cost line (position then
 * instructions) after `calls=` is the inclusive cost of that call to the `cfn=` named before it,
 * any other cost line is the current function's own.
 */

/** Instructions by name of function (`fn`) or object (`ob`). */
export interface DumpCosts {
  /** Own instructions, by name. */
  self: Map<string, number>;
  /** Inclusive instructions of calls into each function, summed over its callers (a recursive function's counts its inner calls again). */
  calledInclusive: Map<string, number>;
}

/** Own and called-inclusive instructions of every function (or object) of a dump. */
export function dumpCosts(dump: string, by: 'fn' | 'ob' = 'fn'): DumpCosts {
  const names = new Map<string, string>();
  const spec = by === 'ob' ? /^c?ob=\((\d+)\)(?: (.*))?$/ : /^c?fn=\((\d+)\)(?: (.*))?$/;
  const own = `${by}=`;
  const callee = `c${by}=`;
  const self = new Map<string, number>();
  const calledInclusive = new Map<string, number>();
  let current = '';
  let target = '';
  let afterCalls = false;
  for (const line of dump.split('\n')) {
    if (line.startsWith(own) || line.startsWith(callee)) {
      const m = spec.exec(line);
      if (!m) continue;
      if (m[2] !== undefined) names.set(m[1]!, m[2]);
      const name = names.get(m[1]!) ?? '';
      if (line.startsWith(own)) current = name;
      else target = name;
      continue;
    }
    if (line.startsWith('calls=')) {
      afterCalls = true;
      continue;
    }
    const c = line.charCodeAt(0);
    if ((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 42) {
      const cost = Number(line.split(' ')[1] ?? 0);
      if (afterCalls) {
        afterCalls = false;
        // Under `ob` the callee object comes from `cob=`, which callgrind omits when it is the caller's own.
        const to = target || current;
        calledInclusive.set(to, (calledInclusive.get(to) ?? 0) + cost);
        target = '';
      } else self.set(current, (self.get(current) ?? 0) + cost);
    }
  }
  return { self, calledInclusive };
}

/** Own instructions of the names `match` accepts. */
export function selfCostOf(dump: string, by: 'fn' | 'ob', match: (name: string) => boolean): number {
  let sum = 0;
  for (const [name, n] of dumpCosts(dump, by).self) if (match(name)) sum += n;
  return sum;
}

/**
 * V8's entry points into compilation from running code (`--single-threaded`: every compile runs
 * inside one of these runtime calls): lazy and baseline compiles, optimizing compiles and
 * on-stack replacement, and the deoptimizer's notification. The inclusive cost of calls into them
 * takes the compiler's helpers that no name pattern catches (the zone's `std::` containers,
 * `memset`, `IdentityMap`, `RootIndexMap`), and leaves the deoptimizer's frame readers
 * (`TranslatedState`) that error stack captures also use where they are called from.
 */
export const V8_COMPILE_ENTRY = /v8::internal::Runtime_(?:CompileOptimized|CompileLazy|CompileBaseline|InstallBaselineCode|CompileForOnStackReplacement|NotifyDeoptimized)\b/;

/** Inclusive instructions of the calls into {@link V8_COMPILE_ENTRY} in a dump. */
export function compileInclusiveInstructions(dump: string): number {
  let sum = 0;
  for (const [name, n] of dumpCosts(dump, 'fn').calledInclusive) if (V8_COMPILE_ENTRY.test(name)) sum += n;
  return sum;
}
