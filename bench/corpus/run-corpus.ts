import { existsSync } from 'node:fs';
import { startDetector, CLI, type DetectorProcess } from '../../test/e2e/helpers/detector.js';
import { cellName, PYTHON_CLIENTS, SCRIPT_FAULTS, STATELESS_FAULTS, type CorpusCell } from './corpus-cell.js';
import { unavailable } from './corpus-servers.js';
import { perturbCapture, type NoiseOptions } from './capture-noise.js';
import { settledLiveFindings } from './live-findings.js';
import { analyzeCapture } from './offline-findings.js';
import { runCell, type CellRun } from './run-cell.js';
import { Scoreboard, type ScoreMode } from './score.js';
import { labelRun } from './wire-labels.js';
import { runSees } from './path-visibility.js';
import { pythonNotPlayable } from './python-inprocess.js';
import { pythonClientNotPlayable } from './python-client-cells.js';
import { restartNotPlayable, resumeStatuses, RESTART_FAULTS } from './restart-faults.js';

/** The live detector's decision window in the corpus, ms (short: runs are seconds long). */
export const CORPUS_DECISION_WINDOW_MS = 1000;

/** The live detector's stateless re-issue window, ms: an orphan is decided only after it, so short; a cell's re-issue comes within ~0.2 s. */
export const CORPUS_REISSUE_WINDOW_MS = 4000;

export interface RunCorpusOptions {
  cells: readonly CorpusCell[];
  modes: readonly ScoreMode[];
  noise: NoiseOptions;
  /** Perturbed copies of each capture scored under `offline+noise`. Default 2. */
  noiseSeeds?: number;
  /** Progress lines (a run done, a cell skipped). */
  log?: (line: string) => void;
  /** Each run with its labels, for callers that keep them (the quick test explains failures with them). */
  onRun?: (run: CellRun, labels: ReturnType<typeof labelRun>) => void;
}

/**
 * Runs every cell and scores forkwatch against the wire's labels: live (a real `forkwatch serve`
 * process fed by the run's exporters), offline (`forkwatch analyze` over the run's OTLP capture)
 * and offline under seeded noise. Cells whose server cannot run here are skipped, said in the log.
 */
export async function runCorpus(opts: RunCorpusOptions): Promise<Scoreboard> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (the corpus runs the built CLI)`);
  const log = opts.log ?? (() => {});
  const board = new Scoreboard();
  let detector: DetectorProcess | undefined;
  try {
    if (opts.modes.includes('live')) {
      detector = await startDetector({ args: ['--decision-window-ms', String(CORPUS_DECISION_WINDOW_MS), '--tick-interval-ms', '100', '--reissue-window-ms', String(CORPUS_REISSUE_WINDOW_MS)] });
    }
    for (const cell of opts.cells) {
      const why = unavailable(cell.server) ?? (PYTHON_CLIENTS.includes(cell.client) ? unavailable('python') : undefined);
      const name = cellName(cell);
      if (why !== undefined) {
        log(`skip ${name}: ${why}`);
        continue;
      }
      const skip = notPlayable(cell);
      if (skip !== undefined) {
        log(`skip ${name}: ${skip}`);
        continue;
      }
      const t0 = Date.now();
      const run = await runCell(cell, detector?.otlpUrl);
      const labels = labelRun(run);
      opts.onRun?.(run, labels);
      const path = cell.path.name;
      const sees = (kind: Parameters<typeof runSees>[1]): boolean => runSees(run, kind);
      if (detector) {
        const minWaitMs = CORPUS_DECISION_WINDOW_MS + 1500 + (cell.path.stateless ? CORPUS_REISSUE_WINDOW_MS : 0);
        const live = await settledLiveFindings(detector.httpUrl, run.services, { minWaitMs });
        board.add('live', path, name, labels, live, sees);
      }
      if (opts.modes.includes('offline')) board.add('offline', path, name, labels, await analyzeCapture(run.capture), sees);
      if (opts.modes.includes('offline+noise')) {
        for (let i = 0; i < (opts.noiseSeeds ?? 2); i++) {
          const seed = cell.seed * 1000 + i;
          board.add('offline+noise', path, `${name} noise#${seed}`, labels, await analyzeCapture(perturbCapture(run.capture, seed, opts.noise)), sees);
        }
      }
      log(`${name}: ${Date.now() - t0} ms, ${run.capture.length} export(s), labels ${[...labels.keys()].join(', ') || 'none'}, resumes answered ${resumeStatuses(run.r.wire.exchanges)}`);
    }
  } finally {
    await detector?.kill();
  }
  return board;
}

/** Why a combination is not played, or undefined. */
function notPlayable(cell: CorpusCell): string | undefined {
  if (cell.server === 'everything' && (cell.fault === 'cut-reap' || cell.fault === 'idle-reaped')) return 'server-everything has no idle reaper';
  const python = pythonNotPlayable(cell) ?? pythonClientNotPlayable(cell);
  if (python !== undefined) return python;
  if (cell.path.stateless === true) {
    if (!STATELESS_FAULTS.includes(cell.fault)) return `a stateless path plays ${STATELESS_FAULTS.join(', ')}`;
    if (cell.client === 'guarded') return 'connectGuarded guards a session: a stateless server has none';
    return undefined;
  }
  if (STATELESS_FAULTS.includes(cell.fault) && !SCRIPT_FAULTS.includes(cell.fault)) return 'a stateless fault (no session to cut and resume)';
  if (RESTART_FAULTS.includes(cell.fault)) return restartNotPlayable(cell);
  if (SCRIPT_FAULTS.includes(cell.fault) && cell.client === 'guarded') return 'the scripted session drives the stock SDK client only';
  return undefined;
}
