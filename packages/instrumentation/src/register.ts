/**
 * `node --import @forkwatch/instrumentation/register app.js`: zero-code instrumentation.
 *
 * Starts the OpenTelemetry NodeSDK (`@opentelemetry/sdk-node`, a peer: install it next to this
 * package) with {@link McpForkInstrumentation}, configured by the standard `OTEL_*` variables
 * (exporter, endpoint, service name, sampler) and by `FORKWATCH_SESSION_SALT` /
 * `FORKWATCH_RECORD_RAW_SESSION_ID` / `FORKWATCH_MCP_SEMCONV` (the MCP conventions' spans and
 * metrics, docs/telemetry.md). ESM modules are patched through the import-in-the-middle
 * loader, registered here for the MCP SDK's files only.
 *
 * On a natural exit, and on SIGTERM/SIGINT, held-back spans are flushed and the SDK is shut down,
 * so the process's last second of spans is exported. When the app has its own signal handler,
 * that handler decides when the process exits; otherwise the process exits as it would have
 * (128 + signal number) once the spans are out.
 */
import { register } from 'node:module';
import { diag } from '@opentelemetry/api';
import { McpForkInstrumentation } from './otel/mcp-fork-instrumentation.js';
import { readRegisterEnv } from './otel/register-env.js';
import { ESM_SDK_FILES } from './otel/supported-versions.js';

const env = readRegisterEnv(process.env);
for (const warning of env.warnings) diag.warn(warning);

// The loader must be in place before the app's imports run. It wraps only the MCP SDK files the
// instrumentation patches (import-in-the-middle's `include`), so no other module of the app is
// touched. (Its message channel matches bare specifiers only, never the SDK's subpath imports.)
try {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: [ESM_SDK_FILES] } });
} catch (err) {
  diag.warn('forkwatch: ESM loader hook not registered; only CommonJS MCP SDK imports are instrumented', err);
}

const { NodeSDK } = (await import('@opentelemetry/sdk-node')) as typeof import('@opentelemetry/sdk-node');
const instrumentation = new McpForkInstrumentation({ serverOptions: env.options, clientOptions: env.options });
const sdk = new NodeSDK({ instrumentations: [instrumentation] });
sdk.start();

let stopping: Promise<void> | undefined;
const stop = (): Promise<void> => (stopping ??= instrumentation.forceFlush().then(() => sdk.shutdown()).catch((err: unknown) => diag.warn('forkwatch: shutdown failed', err)));

process.once('beforeExit', () => void stop());
for (const [signal, number] of [['SIGTERM', 15], ['SIGINT', 2]] as const) {
  const onSignal = (): void => {
    // Another listener (the app's) owns the exit; ours only gets the spans out meanwhile.
    const appHandles = process.listenerCount(signal) > 0;
    void stop().then(() => {
      if (!appHandles) process.exit(128 + number);
    });
  };
  process.once(signal, onSignal);
}
