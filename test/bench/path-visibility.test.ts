/**
 * The corpus's run-level visibility (bench/corpus/path-visibility.ts): the plain proxy's mint after
 * a graceful restart that sent nothing is unseen (docs/proxy.md's boundary), and only that.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CORPUS_PATHS } from '../../bench/corpus/corpus-paths.js';
import { runSees } from '../../bench/corpus/path-visibility.js';
import type { CellRun } from '../../bench/corpus/run-cell.js';

function run(path: string, events: number[], refused = false): CellRun {
  const p = CORPUS_PATHS.find((x) => x.name === path)!;
  // refused-restart: the reconnects met a closed address (502 through the proxy), no resume reached
  // the new server; the client's cancel (202) did, after the restart.
  const exchanges = refused
    ? [
        { method: 'POST', status: 200, at: 10 },
        { method: 'GET', lastEventId: 'e4', status: 502, at: 600 },
        { method: 'POST', status: 202, at: 1_200 },
      ]
    : [
        { method: 'POST', status: 200, at: 10 },
        { method: 'GET', lastEventId: 'e4', status: 200, at: 1_000 },
      ];
  return {
    cell: { path: p, server: 'naive', client: 'stock', fault: refused ? 'refused-restart' : 'server-restart', seed: 1, id: 'x' },
    r: {
      steps: [{ atMs: 1_100, what: 'server restarted' }],
      wire: { exchanges, events: events.map((at, i) => ({ sessionId: 's', eventId: `e${i + 1}`, info: { kind: 'none' }, exchange: 0, at })), inflight: 0 },
    },
  } as unknown as CellRun;
}

test('plain proxy: a mint with no event after the 2xx resume is out of sight; with events after it, in sight', () => {
  assert.equal(runSees(run('proxy/ts-1.x', [100, 200]), 'minted_on_resume'), false);
  assert.equal(runSees(run('proxy/ts-1.x', [100, 1_050]), 'minted_on_resume'), true);
  assert.equal(runSees(run('proxy/ts-1.x', [100, 200]), 'orphaned_progress_token'), true, 'only the mint');
});

test('plain proxy, refused reconnects: a mint on the cancel with no event after the restart is out of sight', () => {
  assert.equal(runSees(run('proxy/ts-1.x', [100, 200], true), 'minted_on_resume'), false);
  assert.equal(runSees(run('proxy/ts-1.x', [100, 1_300], true), 'minted_on_resume'), true);
});

test('SDK 2.x stateless with the stock client: orphaned_request out of sight (2026-07-28: the close is the cancel); instrumented, in sight', () => {
  const cell = (client: string, path = 'stateless/sdk-2.x'): CellRun =>
    ({ cell: { path: CORPUS_PATHS.find((x) => x.name === path)!, server: 'stateless', client, fault: 'cut', seed: 1, id: 'x' }, r: { steps: [], wire: { exchanges: [], events: [] } } }) as unknown as CellRun;
  assert.equal(runSees(cell('stock'), 'orphaned_request'), false);
  assert.equal(runSees(cell('instrumented'), 'orphaned_request'), true);
  assert.equal(runSees(cell('stock', 'stateless/sdk-1.x'), 'orphaned_request'), true);
  assert.equal(runSees(cell('stock', 'proxy/stateless-ts-1.x'), 'orphaned_request'), true);
});

test('--guard and in-process paths see the mint whatever the wire showed', () => {
  assert.equal(runSees(run('proxy --guard/ts-1.x', [100, 200]), 'minted_on_resume'), true);
  assert.equal(runSees(run('sdk-1.x', [100, 200]), 'minted_on_resume'), true);
});
