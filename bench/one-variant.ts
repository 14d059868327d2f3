/**
 * One variant of the instrumentation benchmark alone in a process, for instruction counting
 * (bench/instruction-count.ts runs it under valgrind): VARIANT=plain|instrumented, N timed calls
 * after a fixed warm-up. Prints RUN_OK when every call succeeded.
 */
import { otlpSink, round, startVariant } from './instrumentation.js';

const sink = await otlpSink();
const v = await startVariant(process.env.VARIANT === 'instrumented', sink.url);
await round(v, 300, 4);
await round(v, Number(process.env.N ?? 100), 4);
await v.close();
await sink.close();
console.log('RUN_OK');
process.exit(0);
