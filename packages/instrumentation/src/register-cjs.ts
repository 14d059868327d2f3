/**
 * `node --require @forkwatch/instrumentation/register app.cjs`: the CommonJS twin of register.ts
 * (the package's `require` condition maps `/register` to its CommonJS build, dist/cjs/). Only
 * meaningful as CommonJS: it uses `require` and `__filename`, which the ESM build of this file
 * does not have (no export map points at that build).
 */
import { register } from 'node:module';
import { pathToFileURL } from 'node:url';
import { missingPeers, missingPeersLine } from './otel/peer-check.js';
import { ESM_SDK_FILES } from './otel/supported-versions.js';
import type { startRegister as StartRegister } from './otel/start-register.js';

const missing = missingPeers(require);
if (missing.length > 0) {
  process.stderr.write(`${missingPeersLine(missing)}\n`);
} else {
  try {
    try {
      // ESM imports of the SDK (an `import()` from CommonJS, an .mjs module) are patched too.
      register('@opentelemetry/instrumentation/hook.mjs', pathToFileURL(__filename).href, { data: { include: [ESM_SDK_FILES] } });
    } catch (err) {
      process.stderr.write(`forkwatch: ESM loader hook not registered (${String(err)}); only CommonJS MCP SDK imports are instrumented\n`);
    }
    const { startRegister } = require('./otel/start-register.js') as { startRegister: typeof StartRegister };
    startRegister(require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node'));
  } catch (err) {
    process.stderr.write(`forkwatch: zero-code setup failed (${String(err)}): the app runs uninstrumented\n`);
  }
}
