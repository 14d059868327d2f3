import { fileURLToPath } from 'node:url';
import { startExternalServer } from '../../test/e2e/helpers/external-server.js';
import { pythonVenv } from '../../test/e2e/helpers/python-venv.js';
import { reservePort } from '../../test/e2e/helpers/reserve-port.js';
import type { CorpusCell } from './corpus-cell.js';
import type { ExternalServer } from './corpus-servers.js';

const SCRIPT = fileURLToPath(new URL('./python_inprocess_server.py', import.meta.url));

/**
 * The `python` path's server: the seed's Python `mcp` server (rehydrating, or the package's
 * GuardedSessionManager) with forkwatch_instrumentation's server instrumentation in its own
 * process, exporting OTLP JSON to the cell's capture sink as `<cell id>-server`, the service name
 * the in-process TypeScript servers use. Undefined for every other path.
 */
export function pythonInProcessServer(
  cell: CorpusCell,
  sinkUrl: string,
  salt: string,
): ((t: { reapAfterMs: number; steps: number; stepMs: number }) => Promise<ExternalServer>) | undefined {
  if (cell.path.via !== 'in-process' || (cell.server !== 'python-naive' && cell.server !== 'python-guarded')) return undefined;
  const manager = cell.server === 'python-naive' ? 'naive' : 'guarded';
  return async (t) =>
    startExternalServer(pythonVenv()!, [
      SCRIPT,
      '--manager',
      manager,
      '--port',
      String(await reservePort()),
      '--idle-timeout-s',
      String(t.reapAfterMs / 1000),
      '--steps',
      String(t.steps),
      '--step-ms',
      String(t.stepMs),
      '--otlp-url',
      sinkUrl,
      '--service',
      `${cell.id}-server`,
      '--salt',
      salt,
    ]);
}

/**
 * Why a Python server cannot play a cell's fault, or undefined. mcp 2.3.0 suspends a session's idle
 * countdown while a GET stream is open (mcp/server/streamable_http.py, `idle_timeout`), and the
 * stock client keeps its standalone GET open: the session is never idle, never reaped, and the
 * cell would score a fault that did not happen (no label, no finding).
 */
export function pythonNotPlayable(cell: CorpusCell): string | undefined {
  const python = cell.server === 'python' || cell.server === 'python-naive' || cell.server === 'python-guarded';
  if (python && cell.fault === 'idle-reaped') return 'mcp does not reap a session while its GET stream is open (the client keeps one): never idle';
  return undefined;
}
