/**
 * `node --import <this file>`: the `sdk-only` baseline of `npm run bench -- instructions`. What
 * `--import @forkwatch/instrumentation/register` does (packages/instrumentation/src/register.ts),
 * less forkwatch: NodeSDK configured by the same `OTEL_*` variables, started the same way and shut
 * down by the same hooks, with no instrumentation at all (register passes forkwatch's alone, so
 * NodeSDK's own http/undici instrumentations are off in both). Left out with forkwatch: its
 * import-in-the-middle loader hook, which wraps only the MCP SDK's files.
 * zero-code over this is forkwatch's own cost on an app that already runs NodeSDK.
 */
import { diag } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';

const sdk = new NodeSDK({ instrumentations: [] });
sdk.start();

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
