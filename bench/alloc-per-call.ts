/**
 * Bytes the JavaScript heap allocates per tool call, by allocating function: V8's sampling heap
 * profiler (inspector), counting objects the scavenger and the major GC collected too, over N calls
 * after a warm-up. What the GC column of `npm run bench -- instructions` is made of; a first look
 * at where it comes from, not a figure for docs (sampling: +-5 % on the total at the default).
 *
 *   node --expose-gc build/bench/alloc-per-call.js            (after `tsc -p tsconfig.bench.json`)
 *
 * Environment: VARIANT=none|both|server|client (default both), APP=echo|progress-store (default
 * progress-store), WARMUP (calls, default 1000), N (calls sampled, default 2000), INTERVAL (mean
 * bytes between samples, default 256), TOP (rows printed, default 25), SURVIVING=1 (count only what
 * outlived a young-generation GC: what scavenges copy and promote, by allocating function).
 */
import { Session } from 'node:inspector/promises';
import { otlpSink, round, startVariant, type BenchApp, type BenchSides } from './instrumentation.js';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

const sides = (process.env.VARIANT ?? 'both') as BenchSides;
const app = (process.env.APP ?? 'progress-store') as BenchApp;
const n = Number(process.env.N ?? 2000);
const surviving = process.env.SURVIVING === '1';
const sink = await otlpSink();
const v = await startVariant(sides, sink.url, { requestSpanDelayMs: 100_000 }, app);
await round(v, Number(process.env.WARMUP ?? 1000), 4);
(globalThis as { gc?: () => void }).gc?.();

const session = new Session();
session.connect();
await session.post('HeapProfiler.startSampling', {
  samplingInterval: Number(process.env.INTERVAL ?? 256),
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: !surviving,
} as never);
await round(v, n, 4);
const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: ProfileNode } };
session.disconnect();

const bySite = new Map<string, number>();
let total = 0;
const walk = (node: ProfileNode): void => {
  const f = node.callFrame;
  if (node.selfSize > 0) {
    const file = f.url.replace(/^.*\/(node_modules|packages|build)\//, '$1/');
    const key = `${f.functionName || '(anonymous)'} ${file}:${f.lineNumber + 1}`;
    bySite.set(key, (bySite.get(key) ?? 0) + node.selfSize);
    total += node.selfSize;
  }
  for (const c of node.children) walk(c);
};
walk(profile.head);
console.log(`${app} ${sides}: ${(total / n).toFixed(0)} bytes ${surviving ? 'allocated and surviving a scavenge' : 'allocated'} per call (sampled over ${n} calls)`);
for (const [k, b] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 25))) {
  console.log(`${(b / n).toFixed(0).padStart(8)}  ${k}`);
}
await v.close();
await sink.close();
process.exit(0);
