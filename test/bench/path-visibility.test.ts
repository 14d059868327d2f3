/**
 * The corpus's run-level visibility (bench/corpus/path-visibility.ts): the plain proxy's mint after
 * a graceful restart that sent nothing is unseen (docs/proxy.md's boundary), and only that.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CORPUS_PATHS } from '../../bench/corpus/corpus-paths.js';
import { runSees } from '../../bench/corpus/path-visibility.js';
import type { CellRun } from '../../bench/corpus/run-cell.js';

function run(path: string, events: number[]): CellRun {
  const p = CORPUS_PATHS.find((x) => x.name === path)!;
  const exchanges = [
    { method: 'POST', status: 200, at: 10 },
    { method: 'GET', lastEventId: 'e4', status: 200, at: 1_000 },
  ];
  return {
    cell: { path: p, server: 'naive', client: 'stock', fault: 'server-restart', seed: 1, id: 'x' },
    r: { wire: { exchanges, events: events.map((at, i) => ({ sessionId: 's', eventId: `e${i + 1}`, info: { kind: 'none' }, exchange: 0, at })), inflight: 0 } },
  } as unknown as CellRun;
}

test('plain proxy: a mint with no event after the 2xx resume is out of sight; with events after it, in sight', () => {
  assert.equal(runSees(run('proxy/ts-1.x', [100, 200]), 'minted_on_resume'), false);
  assert.equal(runSees(run('proxy/ts-1.x', [100, 1_050]), 'minted_on_resume'), true);
  assert.equal(runSees(run('proxy/ts-1.x', [100, 200]), 'orphaned_progress_token'), true, 'only the mint');
});

test('--guard and in-process paths see the mint whatever the wire showed', () => {
  assert.equal(runSees(run('proxy --guard/ts-1.x', [100, 200]), 'minted_on_resume'), true);
  assert.equal(runSees(run('sdk-1.x', [100, 200]), 'minted_on_resume'), true);
});
