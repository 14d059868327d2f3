/**
 * `npm run bench -- corpus`: the labelled corpus (bench/corpus/). Knobs (env): CORPUS_PATHS,
 * CORPUS_CLIENTS, CORPUS_FAULTS, CORPUS_SEEDS (see bench/corpus/corpus-paths.ts), CORPUS_MODES
 * (`live,offline,offline+noise`, default all), CORPUS_NOISE_SEEDS (perturbed copies per capture,
 * default 2), CORPUS_NOISE_DROP / _SKEW_MS / _DUPLICATE (bench/corpus/capture-noise.ts), CORPUS_KEEP_DIR
 * (a directory: each run's OTLP capture, wire, labels and logs are written there, to read a mismatch).
 */
import { cellsOf, selectionFromEnv } from './corpus/corpus-paths.js';
import { corpusTable } from './corpus/corpus-table.js';
import { noiseFromEnv } from './corpus/capture-noise.js';
import { runCorpus } from './corpus/run-corpus.js';
import type { ScoreMode } from './corpus/score.js';
import { keepRun } from './corpus/keep-run.js';

const MODES: readonly ScoreMode[] = ['live', 'offline', 'offline+noise'];

/** Runs the corpus the environment selects and prints its table; resolves to the number of mismatches. */
export async function benchCorpus(print: (line: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const sel = selectionFromEnv(env);
  const modes = env.CORPUS_MODES ? env.CORPUS_MODES.split(',').map((m) => m.trim() as ScoreMode) : [...MODES];
  const bad = modes.find((m) => !MODES.includes(m));
  if (bad !== undefined) throw new Error(`CORPUS_MODES: unknown ${JSON.stringify(bad)}; known: ${MODES.join(', ')}`);
  const noiseSeeds = Number(env.CORPUS_NOISE_SEEDS ?? 2);
  if (!Number.isInteger(noiseSeeds) || noiseSeeds < 0) throw new Error(`CORPUS_NOISE_SEEDS: an integer >= 0, got ${JSON.stringify(env.CORPUS_NOISE_SEEDS)}`);
  const noise = noiseFromEnv(env);
  const cells = cellsOf(sel);
  print(`# ${cells.length} runs: paths ${sel.paths.map((p) => p.name).join(', ')}; clients ${sel.clients.join(', ')}; faults ${sel.faults.join(', ')}; seeds ${sel.seeds.join(', ')}`);
  print(`# modes ${modes.join(', ')}; noise: drop ${noise.drop}, skew up to ${noise.skewMs} ms, duplicate ${noise.duplicate}, shuffled batches, ${noiseSeeds} copies per capture`);
  print('# labels from the wire (client tap, call outcomes, the servers\' own account), scored per run and kind: P/R (tp fp fn +labels the path cannot see)');
  const keepDir = env.CORPUS_KEEP_DIR || undefined;
  const board = await runCorpus({ cells, modes, noise, noiseSeeds, log: (l) => print(`  ${l}`), ...(keepDir ? { onRun: keepRun(keepDir) } : {}) });
  for (const line of corpusTable(board, modes, sel.paths.map((p) => p.name))) print(line);
  return board.mismatches.length;
}
