/**
 * `node --import @forkwatch/instrumentation/register app.js`: zero-code instrumentation (ESM entry;
 * `node --require` gets the CommonJS twin, register-cjs.ts).
 *
 * Checks the OpenTelemetry peers first (`@opentelemetry/api`, `/instrumentation`, `/sdk-node`):
 * if one is missing, one stderr line names it and the app runs uninstrumented. Otherwise registers
 * the import-in-the-middle loader for the MCP SDK's files only, and enables
 * `McpForkInstrumentation`, configured by the standard `OTEL_*` variables (exporter, endpoint,
 * service name, sampler) and by `FORKWATCH_SESSION_SALT` / `FORKWATCH_RECORD_RAW_SESSION_ID` /
 * `FORKWATCH_MCP_SEMCONV` / `FORKWATCH_REQUEST_SPAN_DELAY_MS`. Spans go through the app's own
 * tracer provider when it registered one before the first MCP transport is used (joined, one
 * stderr line), else through a NodeSDK started then (startRegister, otel/start-register.ts).
 *
 * On a natural exit, and on SIGTERM/SIGINT, held-back spans are flushed and the SDK is shut down,
 * so the process's last second of spans is exported. When the app has its own signal handler,
 * that handler decides when the process exits; otherwise the process exits as it would have
 * (128 + signal number) once the spans are out.
 */
import { createRequire, register } from 'node:module';
import { missingPeers, missingPeersLine } from './otel/peer-check.js';
import { ESM_SDK_FILES } from './otel/supported-versions.js';

const missing = missingPeers(createRequire(import.meta.url));
if (missing.length > 0) {
  process.stderr.write(`${missingPeersLine(missing)}\n`);
} else {
  try {
    // The loader must be in place before the app's imports run. It wraps only the MCP SDK files the
    // instrumentation patches (import-in-the-middle's `include`), so no other module is touched.
    try {
      register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: [ESM_SDK_FILES] } });
    } catch (err) {
      process.stderr.write(`forkwatch: ESM loader hook not registered (${String(err)}); only CommonJS MCP SDK imports are instrumented\n`);
    }
    const sdkNode = (await import('@opentelemetry/sdk-node')) as typeof import('@opentelemetry/sdk-node');
    const { startRegister } = await import('./otel/start-register.js');
    startRegister(sdkNode);
  } catch (err) {
    // Never keep the app from starting.
    process.stderr.write(`forkwatch: zero-code setup failed (${String(err)}): the app runs uninstrumented\n`);
  }
}
