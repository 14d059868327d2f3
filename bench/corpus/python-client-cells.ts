import { PYTHON_CLIENTS, type CorpusCell } from './corpus-cell.js';

/** Faults the Python client plays: the seed's partition (bench/corpus/python-client-scenario.ts). */
export const PYTHON_CLIENT_FAULTS = ['cut-reap', 'cut-healthy'] as const;

/**
 * Why a Python client (bench/corpus/python_client.py) cannot play a cell, or undefined. It plays
 * the seed's script only (initialize, `slow_report` with a progress token, the partition, the
 * retry), against a server that serves `slow_report` and keeps sessions.
 */
export function pythonClientNotPlayable(cell: CorpusCell): string | undefined {
  if (!PYTHON_CLIENTS.includes(cell.client)) return undefined;
  if (cell.path.stateless === true) return 'the Python client plays the seed script of a session: a stateless server has none';
  if (!(PYTHON_CLIENT_FAULTS as readonly string[]).includes(cell.fault)) return `the Python client plays the seed's partition only (${PYTHON_CLIENT_FAULTS.join(', ')})`;
  if (cell.server === 'everything') return 'the Python client calls slow_report, which server-everything does not serve';
  return undefined;
}
