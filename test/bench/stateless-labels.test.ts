/**
 * The stateless corpus labels (bench/corpus/stateless-labels.ts) on hand-made runs: they come from
 * the wire, the app's outcomes and the server's account only, so each rule is checked here apart
 * from any real run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelStateless } from '../../bench/corpus/stateless-labels.js';
import type { StatelessCallRecord, StatelessRun } from '../../bench/corpus/stateless-scenario.js';
import type { StatelessWireMessage } from '../../bench/corpus/stateless-tap.js';
import type { StatelessToolRun } from '../../bench/corpus/stateless-servers.js';

const sent = (exchange: number, id: string, at: number): StatelessWireMessage => ({ dir: 'sent', exchange, at, info: { kind: 'request', id, method: 'tools/call', progressToken: id } });
const progress = (exchange: number, token: string, at: number): StatelessWireMessage => ({ dir: 'received', exchange, at, info: { kind: 'notification', method: 'notifications/progress', progressToken: token } });
const answer = (exchange: number, id: string, at: number): StatelessWireMessage => ({ dir: 'received', exchange, at, info: { kind: 'response', id } });
const cancel = (exchange: number, at: number): StatelessWireMessage => ({ dir: 'sent', exchange, at, info: { kind: 'notification', method: 'notifications/cancelled' } });
const call = (attempt: number, outcome: StatelessCallRecord['outcome']): StatelessCallRecord => ({ attempt, outcome, progress: 1, startedAtMs: attempt * 100 });
const srv = (o: Partial<StatelessToolRun> = {}): StatelessToolRun => ({ topic: 'q3', startedAtMs: 0, completedAtMs: 500, sentAfterClose: 0, acceptedAfterClose: 0, ...o });
const run = (calls: StatelessCallRecord[], wire: StatelessWireMessage[], serverRuns: StatelessToolRun[]): StatelessRun => ({ sdk: '1.x', fault: 'cut', calls, wire, serverRuns, steps: [], wallMs: 1 });

test('a cut call the app waited on, never answered nor re-issued: orphaned_request; a handler sending after the close: work_after_cancel', () => {
  const l = labelStateless(run([call(1, 'timeout')], [sent(1, '1', 100), progress(1, '1', 150)], [srv({ closedAtMs: 160, sentAfterClose: 7 })]));
  assert.deepEqual([...l.keys()].sort(), ['orphaned_request', 'work_after_cancel']);
});

test('re-issued and answered: no orphan; the first run completed after its close and the second too: duplicate_execution', () => {
  const l = labelStateless(
    run([call(1, 'timeout'), call(2, 'result')], [sent(1, '1', 100), progress(1, '1', 150), sent(3, '2', 2700), answer(3, '2', 3200)], [srv({ closedAtMs: 160 }), srv({ startedAtMs: 2700, completedAtMs: 3200 })]),
  );
  assert.deepEqual([...l.keys()], ['duplicate_execution']);
});

test('a call the app cancelled is never an orphan; its messages arriving after the cancel are work_after_cancel', () => {
  const quiet = labelStateless(run([call(1, 'cancelled')], [sent(1, '1', 100), progress(1, '1', 150), cancel(2, 160)], [srv()]));
  assert.deepEqual([...quiet.keys()], []);
  const late = labelStateless(run([call(1, 'cancelled')], [sent(1, '1', 100), progress(1, '1', 150), cancel(2, 160), progress(1, '1', 210), answer(1, '1', 600)], [srv()]));
  assert.deepEqual([...late.keys()], ['work_after_cancel']);
});

test('an answered call, or one whose POST got no stream at all (the app saw the error): nothing', () => {
  assert.deepEqual([...labelStateless(run([call(1, 'result')], [sent(1, '1', 100), answer(1, '1', 600)], [srv()])).keys()], []);
  assert.deepEqual([...labelStateless(run([call(1, 'error')], [sent(1, '1', 100)], [])).keys()], []);
});
