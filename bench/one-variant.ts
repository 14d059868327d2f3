/**
 * One variant of the instrumentation benchmark alone in a process, for instruction counting
 * (bench/instruction-count.ts runs it under valgrind): VARIANT=none|both|server|client|zero-code|sdk-only|sdk-explicit|eager
 * (plain and instrumented are accepted as none and both; eager is both with
 * `maxBufferedPayloadChars: 0`, every buffered event digested as it passes), APP=echo|progress-store, N timed calls
 * after a fixed warm-up and a full GC. Prints RUN_OK when every call succeeded.
 *
 * zero-code: the app is built uninstrumented and the process must run under
 * `node --import @forkwatch/instrumentation/register`, which patches the MCP SDK as it loads and
 * exports through NodeSDK's OTLP/protobuf exporter to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.
 * sdk-only: the same, under `node --import bench/sdk-only-register.js` (NodeSDK without forkwatch).
 * sdk-explicit: under that same NodeSDK, both sides instrumented explicitly as `both` does
 * (createServerInstrumentation/createClientInstrumentation, wrapHandler, observeTransport,
 * wrapFetch, attach) with NodeSDK's global tracer provider, propagator and context manager:
 * zero-code over it is the patching path's own cost, it over sdk-only forkwatch's work under
 * real globals.
 *
 * SINK_URL: an OTLP sink of the caller's (its work is then not counted here, and spans of every
 * variant, zero-code included, are counted in one place); without it a sink runs in this process
 * and its counts are printed as `SINK {json}` once the exporters have flushed.
 */
import { trace } from '@opentelemetry/api';
import { countedWindows } from './window-gate.js';
import { otlpSink, round, startVariant, type BenchApp, type BenchSides } from './instrumentation.js';

const external = process.env.SINK_URL;
const sink = external === undefined ? await otlpSink() : undefined;
const delay = process.env.REQUEST_SPAN_DELAY_MS;
const deliveryTimeout = process.env.DELIVERY_TIMEOUT_MS;
const raw = process.env.VARIANT ?? 'none';
// These run under --import: NodeSDK, which flushes on beforeExit, is in the process.
const underSdk = raw === 'zero-code' || raw === 'sdk-only' || raw === 'sdk-explicit';
const eager = raw === 'eager';
const explicitUnderSdk = raw === 'sdk-explicit';
const sides = (explicitUnderSdk ? 'both' : raw === 'plain' || underSdk ? 'none' : raw === 'instrumented' || eager ? 'both' : raw) as BenchSides;
const app = (process.env.APP ?? 'echo') as BenchApp;
const v = await startVariant(
  sides,
  external ?? sink!.url,
  {
    ...(delay === undefined ? {} : { requestSpanDelayMs: Number(delay) }),
    ...(deliveryTimeout === undefined ? {} : { deliveryTimeoutMs: Number(deliveryTimeout) }),
    ...(eager ? { maxBufferedPayloadChars: 0 } : {}),
    ...(explicitUnderSdk ? { tracerProvider: trace.getTracerProvider() } : {}),
  },
  app,
);
await round(v, Number(process.env.WARMUP ?? 300), 4);

/**
 * WINDOWS=S,L (with a caller that counts only between the markers, bench/instruction-count.ts):
 * after the warm-up, one window of S and one of L calls, each announced on stdout and started and
 * ended only when the caller answers `go` on stdin, so the counter is switched exactly around it.
 */
const settle = async (): Promise<void> => {
  // Each window starts from a full GC, and after the finalizers it queued (a 20-call round lets
  // them run), so it never pays for collecting earlier garbage, wherever the last major GC fell
  // (before startVariant took the AbortSignal out, that also reset undici's abort-listener list,
  // which swung the per-call count by several hundred thousand instructions).
  (globalThis as { gc?: () => void }).gc?.();
  await round(v, 20, 4);
};

/**
 * The counted calls' wall time against the delay (bench/valgrind-delays.ts): a call that outlived
 * `requestSpanDelayMs` emitted spans a real run would not, so the caller reports how many did.
 * Timed per call only here (Date.now(), the same in every variant), not in round().
 */
const noop = (): void => undefined;
const late = { slowestMs: 0, pastDelay: 0, calls: 0 };
const timedRound = async (n: number): Promise<void> => {
  const limit = delay === undefined ? 1000 : Number(delay);
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < n) {
        next++;
        const t0 = Date.now();
        if (v.app === 'echo') await v.client.callTool({ name: 'echo', arguments: { text: 'hello' } });
        else await v.client.callTool({ name: 'progress', arguments: { text: 'hello' } }, undefined, { onprogress: noop });
        const ms = Date.now() - t0;
        late.calls++;
        if (ms > late.slowestMs) late.slowestMs = ms;
        if (ms >= limit) late.pastDelay++;
      }
    }),
  );
};

if (process.env.WINDOWS) {
  await countedWindows(process.env.WINDOWS.split(',').map(Number), settle, timedRound);
  console.log(`LATE ${JSON.stringify(late)}`);
} else {
  await settle();
  // Markers for a profiler that collects only the timed calls (callgrind_control -i on/off).
  if (process.env.MARK_TIMED) console.log('TIMED_START');
  await round(v, Number(process.env.N ?? 100), 4);
  if (process.env.MARK_TIMED) console.log('TIMED_END');
}
await v.close();
if (sink) {
  console.log(`SINK ${JSON.stringify(sink.counts())}`);
  await sink.close();
}
console.log('RUN_OK');
// Under --import the process ends on its own: its beforeExit hook flushes NodeSDK's spans.
if (!underSdk) process.exit(0);
