import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CellRun } from './run-cell.js';
import type { labelRun } from './wire-labels.js';

/**
 * `CORPUS_KEEP_DIR`: writes each run to `dir` as `<cell>.capture.jsonl` (the OTLP JSON exports, as
 * `forkwatch analyze` reads them), `<cell>.wire.json` (the client tap's exchanges, call outcomes and
 * labels) and `<cell>.log` (what the proxy and third-party servers printed), to read a mismatch by hand.
 */
export function keepRun(dir: string): (run: CellRun, labels: ReturnType<typeof labelRun>) => void {
  mkdirSync(dir, { recursive: true });
  return (run, labels) => {
    const c = run.cell;
    const base = join(dir, `${c.path.name} ${c.server} ${c.client} ${c.fault} ${c.seed}`.replace(/[^\w.-]+/g, '_'));
    writeFileSync(`${base}.capture.jsonl`, `${run.capture.join('\n')}\n`);
    writeFileSync(`${base}.wire.json`, `${JSON.stringify({ labels: Object.fromEntries(labels), serverRehydrations: run.serverRehydrations, r: run.r, stateless: run.stateless }, null, 2)}\n`);
    writeFileSync(`${base}.log`, run.logs);
  };
}
