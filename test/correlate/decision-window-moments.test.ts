/**
 * A session end, a resume or a guard's refusal restarts the session's decision window
 * (src/correlate/window-moments.ts): the other side's account of that moment comes seconds later
 * (a batch exporter's delay, a held `request.sent`). Found live in the corpus (Round 7): a guarded
 * client's `failed_session_lost` settle arrived after a decision taken one window after the
 * session's first healthy span, and the detector paged for a call the client had already failed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SessionScript, inc } from '../fixtures/scenarios/scenarios.js';
import { sessionKeyOf } from '../fixtures/scenarios/span-factory.js';
import { harness } from './harness.js';

const WINDOW = 10_000;

/** Server: session created, call 1 (token 1) received and never answered, the session reaped at 9 s. Client: its call settled `outcome` at 9.2 s. */
function reapedWhileCalling(outcome: string): SessionScript {
  const s = new SessionScript({ key: sessionKeyOf(`window-moment-${outcome}`) });
  const a = inc('A');
  s.created(0, a, 'initialize');
  s.received(100, '1', 'tools/call', a, { tool: 'slow', token: '1' });
  s.both(150, a, { id: 'e1', seq: 1, kind: 'notification', method: 'notifications/progress', token: '1', data: 'p1' });
  s.ended(9_000, a, 'reaped_idle');
  s.sent(90, '1', 'tools/call', { tool: 'slow', token: '1' });
  s.settled(9_200, '1', 'tools/call', outcome, '1');
  return s;
}

/** Engine time: the healthy spans at 0, the end at 9 s, the client's spans at 11 s (after the first window closed). */
function play(s: SessionScript): ReturnType<typeof harness> {
  const h = harness();
  const end = s.server.filter((x) => x.name === 'forkwatch.session.ended');
  h.ingest(s.server.filter((x) => x.name !== 'forkwatch.session.ended'));
  h.advance(9_000);
  h.ingest(end);
  h.advance(2_000);
  assert.deepEqual(h.kinds(), [], 'not decided one window after the first span: the end came 2 s ago');
  h.ingest(s.client);
  h.advance(WINDOW);
  return h;
}

describe('the decision window restarts at a session end, a resume, a guard refusal', { timeout: 10_000 }, () => {
  it('a guarded client that failed its call at the end, its settle late: no orphan', () => {
    for (const outcome of ['failed_session_lost', 'failed_fork']) assert.deepEqual(play(reapedWhileCalling(outcome)).kinds(), [], outcome);
  });

  it('a client that waited to its timeout, its settle late: the orphan is found', () => {
    assert.deepEqual(play(reapedWhileCalling('timeout')).kinds(), ['orphaned_progress_token']);
  });

  it('healthy spans do not restart it: a busy session is decided one window after its first span', () => {
    const s = new SessionScript({ key: sessionKeyOf('window-busy') });
    const a = inc('A');
    s.created(0, a, 'initialize');
    s.received(100, '1', 'tools/call', a, { tool: 'slow', token: '1' });
    s.ended(200, a, 'reaped_idle');
    for (let i = 1; i <= 9; i++) s.both(200 + i * 1_000, a, { id: `e${i}`, seq: i, kind: 'notification', method: 'notifications/message', data: `m${i}` });
    const h = harness();
    h.ingest(s.server.slice(0, 3));
    // One event a second from both sides, for nine seconds.
    for (let i = 0; i < 9; i++) {
      h.advance(1_000);
      h.ingest([s.server[3 + i]!, s.client[i]!]);
    }
    h.advance(999);
    assert.deepEqual(h.kinds(), []);
    h.advance(1);
    assert.deepEqual(h.kinds(), ['orphaned_progress_token']);
  });
});
