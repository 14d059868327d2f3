import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SessionScript, inc, type EventSpec } from '../../fixtures/scenarios/scenarios.js';
import { sessionKeyOf } from '../../fixtures/scenarios/span-factory.js';
import { harness } from '../harness.js';

const WINDOW = 10_000;
const A = inc('orderA');
const B = inc('orderB');
const e = (n: number): EventSpec => ({ id: `s1_1767225600000_${'zyxwv'[n - 1]}`, seq: n, kind: 'notification', method: 'notifications/progress', token: '1', data: `p${n}` });

/** Server events 1..4 sent and received, the stream breaks, the client resumes from event 4. */
function brokenAfterFour(label: string): SessionScript {
  const s = new SessionScript({ key: sessionKeyOf(label), guarded: false }, 'counter');
  s.created(0, A, 'initialize');
  for (let i = 1; i <= 4; i++) s.both(i * 10, A, e(i));
  s.clientResume(1_000, e(4).id, 200).serverResume(1_001, e(4).id, 200, { inc: A, found: true, outcome: 'resumed' });
  return s;
}

function decide(s: SessionScript, sides: 'both' | 'server' = 'both') {
  const h = harness();
  const d = s.done();
  h.ingest(sides === 'both' ? [...d.server, ...d.client] : d.server);
  h.advance(WINDOW);
  return h;
}

describe('replay_gap from a replay out of order (server spans)', { timeout: 10_000 }, () => {
  it('a resume that re-sends an event first sent before the cursor is a replay_gap, with the four spans that show it', () => {
    const s = brokenAfterFour('order-down');
    // (The client's copy of it is left out: with the seq the script stamps it would also be a
    // sequence_regression; the SDK example store's ids carry none.)
    s.serverEvent(1_002, A, e(3), { replayed: true });
    for (const h of [decide(s), decide(s, 'server')]) {
      assert.deepEqual(h.kinds(), ['replay_gap']);
      const f = h.findings[0]!;
      assert.equal(f.incarnation, A);
      assert.match(f.summary, /replay after s1_1767225600000_w \(seq 4\) re-sent s1_1767225600000_x \(seq 3\), sent before it/);
      assert.deepEqual(
        f.evidence.filter((x) => x.side === 'server').map((x) => x.shows),
        [
          `server sent the cursor ${e(4).id} as seq 4`,
          `server answered 200 to the resume from ${e(4).id}`,
          `server sent ${e(3).id} as seq 3, before the cursor`,
          `server replayed ${e(3).id} after the cursor`,
        ],
      );
      assert.deepEqual(h.resumes.map((r) => r.outcome), ['forked'], 'the resume is counted as the loss it is');
    }
  });

  it('a replay of the events after the cursor, in order, is a healthy resume', () => {
    const s = brokenAfterFour('order-up');
    for (let i = 5; i <= 6; i++) s.serverEvent(500 + i, A, e(i));
    for (let i = 5; i <= 6; i++) s.serverEvent(1_000 + i, A, e(i), { replayed: true }).clientEvent(1_010 + i, undefined, e(i));
    const h = decide(s);
    assert.deepEqual(h.kinds(), []);
    assert.deepEqual(h.resumes.map((r) => r.outcome), ['resumed']);
  });

  it('re-sending the cursor itself (an inclusive replay) is not out of order: the client dedups it', () => {
    const s = brokenAfterFour('order-inclusive');
    s.serverEvent(1_002, A, e(4), { replayed: true }).clientEvent(1_004, undefined, e(4), { delivery: 'dropped', seenBefore: true });
    assert.deepEqual(decide(s).kinds(), []);
  });

  it('an early event replayed by a later resume counts for that resume only, and one from another incarnation not at all', () => {
    const s = brokenAfterFour('order-scoped');
    // Events of incarnation B with the same ids (another life of the store) replayed: not A's log.
    s.serverEvent(1_002, B, e(3), { replayed: true });
    // A later resume from event 2 that replays event 3 (seq above its cursor): in order.
    s.serverResume(2_000, e(2).id, 200, { inc: A, found: true, outcome: 'resumed' }).serverEvent(2_001, A, e(3), { replayed: true });
    assert.deepEqual(decide(s, 'server').kinds(), []);
  });
});
