/**
 * Child of `npm run bench -- proxy`: one proxy variant in a process of its own, as it is deployed
 * (a sidecar next to the server), so that its garbage collections and compilations land on its
 * own calls and the client's and upstream's land on every variant alike. argv: KIND (`bare`,
 * `forkwatch`, `guard`) and the upstream's port. Sends `{ port }` once listening; answers
 * `'cpu'` with its CPU time and spans so far and `'gc'` with `'gc-done'` after a full GC;
 * closes on `'close'`.
 */
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createForkwatchProxy } from '../src/proxy/index.js';
import { startBarePipe } from './bare-pipe-proxy.js';

/** Counts spans and drops them: the export cost is the collector's, not the proxy's. */
class DiscardExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (r: { code: number }) => void): void {
    this.spans += spans.length;
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
}

/** What the parent receives on `'cpu'`: microseconds of CPU since start, spans exported. */
export interface SidecarCpu {
  user: number;
  system: number;
  spans: number;
}

const [kind, upPortText] = process.argv.slice(2);
const upPort = Number(upPortText);
const exporter = new DiscardExporter();
let port: number;
let close: () => Promise<void>;
if (kind === 'bare') {
  ({ port, close } = await startBarePipe(upPort));
} else if (kind === 'forkwatch' || kind === 'guard') {
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 65536, maxExportBatchSize: 2048, scheduledDelayMillis: 200 })] });
  const px = await createForkwatchProxy({ upstream: `http://127.0.0.1:${upPort}`, host: '127.0.0.1', port: 0, tracerProvider: provider, guard: kind === 'guard' });
  port = px.port;
  close = async () => {
    await px.close();
    await provider.shutdown();
  };
} else {
  throw new Error(`proxy-sidecar: unknown kind ${String(kind)}`);
}

process.on('message', (m: unknown) => {
  if (m === 'cpu') {
    const c = process.cpuUsage();
    process.send!({ user: c.user, system: c.system, spans: exporter.spans } satisfies SidecarCpu);
  } else if (m === 'gc') {
    (globalThis as { gc?: () => void }).gc?.();
    process.send!('gc-done');
  } else if (m === 'close') {
    void close().then(() => process.exit(0));
  }
});
process.send!({ port });
