import type { CorpusCell, CorpusClient, CorpusFault, CorpusPath } from './corpus-cell.js';

/** Every path the corpus knows, by name. */
export const CORPUS_PATHS: readonly CorpusPath[] = [
  { name: 'sdk-1.x', via: 'in-process', sdk: '1.x', servers: ['naive', 'guarded'] },
  { name: 'sdk-2.x', via: 'in-process', sdk: '2.x', servers: ['naive', 'guarded'] },
  { name: 'proxy/ts-1.x', via: 'proxy', sdk: '1.x', servers: ['naive', 'guarded'] },
  { name: 'proxy --guard/ts-1.x', via: 'proxy --guard', sdk: '1.x', servers: ['naive', 'guarded'] },
  { name: 'proxy/python', via: 'proxy', sdk: '1.x', servers: ['python', 'python-naive'] },
  { name: 'proxy --guard/python', via: 'proxy --guard', sdk: '1.x', servers: ['python', 'python-naive'] },
  // The Python servers with forkwatch_instrumentation in their process (bench/corpus/python-inprocess.ts).
  { name: 'python', via: 'in-process', sdk: '1.x', servers: ['python-naive', 'python-guarded'] },
  { name: 'proxy/everything', via: 'proxy', sdk: '1.x', servers: ['everything'] },
  { name: 'stateless/sdk-1.x', via: 'in-process', sdk: '1.x', servers: ['stateless'], stateless: true },
  { name: 'stateless/sdk-2.x', via: 'in-process', sdk: '2.x', servers: ['stateless'], stateless: true },
  { name: 'proxy/stateless-ts-1.x', via: 'proxy', sdk: '1.x', servers: ['stateless'], stateless: true },
];

export const CORPUS_CLIENTS: readonly CorpusClient[] = ['stock', 'instrumented', 'guarded', 'python-instrumented', 'python-guarded'];
export const CORPUS_FAULTS: readonly CorpusFault[] = ['cut-reap', 'cut-healthy', 'idle-reaped', 'app-cancel', 'delete-after-call', 'cut', 'cut-retry', 'healthy', 'reject-409', 'server-restart', 'refused-restart'];

/** What to run: the cross product of the chosen paths, clients, faults and seeds. */
export interface CorpusSelection {
  paths: readonly CorpusPath[];
  clients: readonly CorpusClient[];
  faults: readonly CorpusFault[];
  seeds: readonly number[];
}

/**
 * The selection from the environment: `CORPUS_PATHS` (comma-separated path names; default all),
 * `CORPUS_CLIENTS`, `CORPUS_FAULTS` (default all), `CORPUS_SEEDS` (comma-separated integers, or
 * `N` alone for seeds 1..N; default `1`). Unknown names are an error naming the known ones.
 */
export function selectionFromEnv(env: NodeJS.ProcessEnv = process.env): CorpusSelection {
  const pick = <T>(v: string | undefined, all: readonly T[], nameOf: (x: T) => string, what: string): T[] => {
    if (v === undefined || v.trim() === '') return [...all];
    return v.split(',').map((s) => {
      const x = all.find((a) => nameOf(a) === s.trim());
      if (x === undefined) throw new Error(`${what}: unknown ${JSON.stringify(s)}; known: ${all.map(nameOf).join(', ')}`);
      return x;
    });
  };
  return {
    paths: pick(env.CORPUS_PATHS, CORPUS_PATHS, (p) => p.name, 'CORPUS_PATHS'),
    clients: pick(env.CORPUS_CLIENTS, CORPUS_CLIENTS, (c) => c, 'CORPUS_CLIENTS'),
    faults: pick(env.CORPUS_FAULTS, CORPUS_FAULTS, (f) => f, 'CORPUS_FAULTS'),
    seeds: parseSeeds(env.CORPUS_SEEDS ?? '1'),
  };
}

function parseSeeds(v: string): number[] {
  const parts = v.split(',').map((s) => Number(s.trim()));
  if (parts.some((n) => !Number.isInteger(n) || n < 0)) throw new Error(`CORPUS_SEEDS: integers >= 0, got ${JSON.stringify(v)}`);
  return parts.length === 1 ? Array.from({ length: parts[0]! }, (_, i) => i + 1) : parts;
}

/** The cells of a selection, in a stable order. */
export function cellsOf(sel: CorpusSelection): CorpusCell[] {
  const out: CorpusCell[] = [];
  const stamp = Date.now().toString(36);
  for (const seed of sel.seeds)
    for (const path of sel.paths)
      for (const server of path.servers)
        for (const client of sel.clients)
          for (const fault of sel.faults) out.push({ path, server, client, fault, seed, id: `corpus-${stamp}-${out.length}` });
  return out;
}
