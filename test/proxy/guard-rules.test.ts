import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judgeEvent, sessionReissued } from '../../src/proxy/guard-rules.js';
import { SessionEventLog } from '../../src/proxy/session-event-log.js';
import { payloadPrint } from '../../src/proxy/payload-print.js';

function log(ids: Array<[string, string]>): SessionEventLog {
  const l = new SessionEventLog(100);
  for (const [id, d] of ids) l.add(id, payloadPrint(d));
  return l;
}

test('a resume continuing after the cursor continues; one restarting or going back does not', () => {
  const l = log([['e1', 'a'], ['e2', 'b'], ['e3', 'c']]);
  assert.equal(judgeEvent(l, 'e4', payloadPrint('d'), 'e3'), 'continues');
  assert.equal(judgeEvent(l, 'e1', payloadPrint('z'), 'e3'), 'restarts', 'same id, other payload: a new log');
  assert.equal(judgeEvent(l, 'e2', payloadPrint('b'), 'e3'), 'regresses', 'same event again, from before the cursor');
});

test('ids without a sequence compare by the order the proxy saw them', () => {
  const l = log([['s_1_x', 'a'], ['s_2_y', 'b'], ['s_3_z', 'c']]);
  assert.equal(judgeEvent(l, 's_3_z', payloadPrint('c'), 's_2_y'), 'continues');
  assert.equal(judgeEvent(l, 's_1_x', payloadPrint('a'), 's_2_y'), 'regresses');
  assert.equal(judgeEvent(l, 'new_id', payloadPrint('q'), 's_2_y'), 'unknown');
});

test('guarded ids naming another incarnation restart', () => {
  const l = log([['aaaaaaaaaaaaaaaa-1', 'a']]);
  assert.equal(judgeEvent(l, 'bbbbbbbbbbbbbbbb-1', payloadPrint('a'), 'aaaaaaaaaaaaaaaa-1'), 'restarts');
  assert.equal(judgeEvent(l, 'aaaaaaaaaaaaaaaa-2', payloadPrint('b'), 'aaaaaaaaaaaaaaaa-1'), 'continues');
});

test('outside a resume: an id already sent restarts; a new lower counter does not (concurrent streams interleave)', () => {
  const l = log([['e1', ''], ['e2', 'b'], ['e7', 'c']]);
  assert.equal(judgeEvent(l, 'e1', payloadPrint(''), undefined), 'restarts');
  assert.equal(judgeEvent(l, 'e5', payloadPrint('x'), undefined), 'continues');
  assert.equal(judgeEvent(l, 'e8', payloadPrint('x'), undefined), 'continues');
});

test('a session id answered other than presented is a reissue', () => {
  assert.equal(sessionReissued('A', 'B'), true);
  assert.equal(sessionReissued('A', 'A'), false);
  assert.equal(sessionReissued(undefined, 'B'), false, 'initialize: no id presented');
  assert.equal(sessionReissued('A', undefined), false);
});
