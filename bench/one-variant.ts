/**
 * One variant of the instrumentation benchmark alone in a process, for instruction counting
 * (bench/instruction-count.ts runs it under valgrind): VARIANT=none|both|server|client (plain and
 * instrumented are accepted as none and both), APP=echo|progress-store, N timed calls after a
 * fixed warm-up and a full GC. Prints RUN_OK when every call succeeded.
 */
import { otlpSink, round, startVariant, type BenchApp, type BenchSides } from './instrumentation.js';

const sink = await otlpSink();
const delay = process.env.REQUEST_SPAN_DELAY_MS;
const raw = process.env.VARIANT ?? 'none';
const sides = (raw === 'plain' ? 'none' : raw === 'instrumented' ? 'both' : raw) as BenchSides;
const app = (process.env.APP ?? 'echo') as BenchApp;
const v = await startVariant(sides, sink.url, delay === undefined ? {} : { requestSpanDelayMs: Number(delay) }, app);
await round(v, 300, 4);
// The timed calls start from a full GC, and after the finalizers it queued (a 20-call round lets
// them run), so they never pay for collecting the warm-up's garbage, wherever the last major GC
// fell (before startVariant took the AbortSignal out, that also reset undici's abort-listener
// list, which swung the per-call count by several hundred thousand instructions).
(globalThis as { gc?: () => void }).gc?.();
await round(v, 20, 4);
await round(v, Number(process.env.N ?? 100), 4);
await v.close();
await sink.close();
console.log('RUN_OK');
process.exit(0);
