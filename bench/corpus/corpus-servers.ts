import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { DemoServer } from '../../src/demo/types.js';
import { startExternalServer } from '../../test/e2e/helpers/external-server.js';
import { pythonVenv, PYTHON_REQUIREMENTS } from '../../test/e2e/helpers/python-venv.js';
import { reservePort } from '../../test/e2e/helpers/reserve-port.js';
import type { CorpusServer } from './corpus-cell.js';

const require = createRequire(import.meta.url);
const PYTHON_SCRIPT = fileURLToPath(new URL('../../test/fixtures/python/seed_server.py', import.meta.url));

/** A third-party server process, with what it printed (its own account of reaps and rehydrations). */
export type ExternalServer = DemoServer & { output(): string };

/** The tool the app calls on server-everything: a long call with 6 progress notifications. */
export const EVERYTHING_TOOL = (): { name: string; arguments: Record<string, unknown> } => ({ name: 'trigger-long-running-operation', arguments: { duration: 2.4, steps: 6 } });

/** Why a server cannot run on this machine, or undefined when it can. */
export function unavailable(server: CorpusServer): string | undefined {
  if ((server === 'python' || server === 'python-naive' || server === 'python-guarded') && pythonVenv() === undefined) return `no Python virtualenv with ${PYTHON_REQUIREMENTS} (.ci/run creates it; or set FORKWATCH_PYTHON_VENV)`;
  return undefined;
}

/** Starts a third-party server for the scenario's timers; undefined for the demo's own servers. */
export function externalServer(server: CorpusServer): ((t: { reapAfterMs: number; steps: number; stepMs: number }) => Promise<ExternalServer>) | undefined {
  if (server === 'python' || server === 'python-naive') {
    return async (t) =>
      startExternalServer(pythonVenv()!, [
        PYTHON_SCRIPT,
        '--port',
        String(await reservePort()),
        '--idle-timeout-s',
        String(t.reapAfterMs / 1000),
        '--steps',
        String(t.steps),
        '--step-ms',
        String(t.stepMs),
        ...(server === 'python-naive' ? ['--naive'] : []),
      ]);
  }
  if (server === 'everything') {
    const main = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
    return async () => startExternalServer(process.execPath, [main, 'streamableHttp'], { env: { PORT: String(await reservePort()) }, ready: /listening on port (\d+)/ });
  }
  return undefined;
}
