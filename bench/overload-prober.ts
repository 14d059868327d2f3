/**
 * The overload bench's health prober, run in a worker thread: its own event loop, so the
 * latencies it measures are the detector's and not those of the bench's 50 load clients (which
 * push ~200 MB/s from the main thread and delayed its timers by hundreds of ms). Polls /healthz
 * and /readyz every `everyMs` until told to stop, then posts back every latency, ms.
 */
import { parentPort, workerData } from 'node:worker_threads';

export interface ProberInput {
  /** The detector's API base URL. */
  http: string;
  everyMs: number;
  timeoutMs: number;
}

export interface ProberOutput {
  healthz: number[];
  readyz: number[];
  /** Probes unanswered within timeoutMs (their latency is counted as timeoutMs). */
  timeouts: number;
  /** `[ms since start, latency]` of each /readyz probe. */
  readyzAt: Array<[number, number]>;
}

async function probe(url: string, timeoutMs: number): Promise<number | undefined> {
  const t0 = performance.now();
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await r.arrayBuffer();
    return performance.now() - t0;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function run(input: ProberInput): Promise<void> {
  const out: ProberOutput = { healthz: [], readyz: [], timeouts: 0, readyzAt: [] };
  let probing = true;
  parentPort!.once('message', () => (probing = false));
  const start = performance.now();
  const loop = async (path: 'healthz' | 'readyz'): Promise<void> => {
    while (probing) {
      const at = performance.now() - start;
      const ms = await probe(`${input.http}/${path}`, input.timeoutMs);
      if (ms === undefined) out.timeouts++;
      out[path].push(ms ?? input.timeoutMs);
      if (path === 'readyz') out.readyzAt.push([at, ms ?? input.timeoutMs]);
      await sleep(input.everyMs);
    }
  };
  await Promise.all([loop('healthz'), loop('readyz')]);
  parentPort!.postMessage(out);
}

if (parentPort !== null && workerData !== undefined) void run(workerData as ProberInput);
