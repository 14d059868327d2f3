/**
 * `node --import <this file>`: the `sdk-only` baseline of `npm run bench -- instructions`, and the
 * NodeSDK under `sdk-explicit`. What `--import @forkwatch/instrumentation/register` does
 * (packages/instrumentation/src/register.ts), less forkwatch: NodeSDK configured by the same
 * `OTEL_*` variables, started the same way and shut down by the same hooks, with no
 * instrumentation at all (register passes forkwatch's alone, so NodeSDK's own http/undici
 * instrumentations are off in both). Left out with forkwatch: its import-in-the-middle loader
 * hook, which wraps only the MCP SDK's files.
 *
 * One span is exported right after start (span `sdk-only.start`, flushed before the app loads):
 * as in any NodeSDK app that exports. The BatchSpanProcessor exports inside `context.with`, and
 * the first `context.with` enables NodeSDK's AsyncLocalStorage context manager, whose promise
 * hooks (Node 20's async_hooks) then run for every promise of the process. Without that span the
 * baseline never exported anything and never paid them, where zero-code (which exports its
 * initialize spans at once) did: the difference was NodeSDK's, reported as forkwatch's.
 * zero-code over this is forkwatch's own cost on an app that already runs and exports with NodeSDK.
 */
import { diag, trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';

const sdk = new NodeSDK({ instrumentations: [] });
sdk.start();

try {
  trace.getTracer('forkwatch-bench').startSpan('sdk-only.start').end();
  const provider = trace.getTracerProvider() as { getDelegate?: () => { forceFlush?: () => Promise<void> } };
  await provider.getDelegate?.().forceFlush?.();
} catch (err) {
  diag.warn('sdk-only: first export failed', err);
}

let stopping: Promise<void> | undefined;
const stop = (): Promise<void> => (stopping ??= sdk.shutdown().catch((err: unknown) => diag.warn('sdk-only: shutdown failed', err)));

process.once('beforeExit', () => void stop());
for (const [signal, number] of [['SIGTERM', 15], ['SIGINT', 2]] as const) {
  process.once(signal, () => {
    const appHandles = process.listenerCount(signal) > 0;
    void stop().then(() => {
      if (!appHandles) process.exit(128 + number);
    });
  });
}
