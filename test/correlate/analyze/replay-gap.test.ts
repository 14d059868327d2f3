/**
 * The client-side replay_gap and counter ids numbered per session or per process rather than per
 * stream (issue 24, defect 3: the Python SDK's stores behind the proxy). Ids between the cursor and
 * the first event after a resume are missing only if they were this session's, with a message,
 * and the client never received them on any stream.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SessionScript, inc, type EventSpec } from '../../fixtures/scenarios/scenarios.js';
import { sessionKeyOf } from '../../fixtures/scenarios/span-factory.js';
import { harness } from '../harness.js';

const WINDOW = 10_000;
const A = inc('gapA');
const progress = (n: number, stream = 'post:1'): EventSpec => ({ id: `e${n}`, seq: n, kind: 'notification', method: 'notifications/progress', token: '1', data: `p${n}`, stream });
const priming = (n: number): EventSpec => ({ id: `e${n}`, seq: n, kind: 'none', data: '', stream: 'get' });

/** e1 (initialize's answer) and e2 (a progress of the call) sent and received; the stream breaks. */
function session(label: string): SessionScript {
  const s = new SessionScript({ key: sessionKeyOf(label), guarded: false }, 'counter');
  s.created(0, A, 'initialize');
  s.both(10, A, { id: 'e1', seq: 1, kind: 'response', rpcId: '0', data: 'init', stream: 'post:0' });
  s.both(20, A, progress(2));
  return s;
}

function decide(s: SessionScript, sides: 'both' | 'client'): string[] {
  const h = harness();
  const d = s.done();
  h.ingest(sides === 'both' ? [...d.server, ...d.client] : d.client);
  h.advance(WINDOW);
  return h.findings.map((f) => `${f.kind}: ${f.summary}`);
}

/** The resume from e2 replays `next` (the call's next event) and the stream goes on. */
function resumeAt(s: SessionScript, next: number): SessionScript {
  s.clientResume(1_000, 'e2', 200).serverResume(1_001, 'e2', 200, { inc: A, found: true, outcome: 'resumed' });
  s.serverEvent(1_002, A, progress(next), { replayed: true }).clientEvent(1_003, undefined, progress(next));
  return s;
}

describe('client-side replay_gap with session-wide or process-wide counter ids', { timeout: 10_000 }, () => {
  it('ids of the gap that went to another stream of the session, where the client received them: no finding', () => {
    const s = session('gap-other-stream');
    for (const n of [3, 4, 5]) s.both(100 + n, A, progress(n, 'get'));
    resumeAt(s, 6);
    assert.deepEqual(decide(s, 'both'), []);
    assert.deepEqual(decide(s, 'client'), []);
  });

  it('ids of the gap that went to other sessions (the server side recorded none of them for this one): no finding', () => {
    const s = resumeAt(session('gap-other-session'), 9);
    assert.deepEqual(decide(s, 'both'), []);
  });

  it('the same with only the client seen: it cannot tell whose the ids were, and reports the gap (the boundary)', () => {
    const s = resumeAt(session('gap-client-only'), 9);
    const f = decide(s, 'client');
    assert.equal(f.length, 1, f.join('\n'));
    assert.match(f[0]!, /^replay_gap: .*continued at seq 9: 6 event\(s\) were never replayed/);
  });

  it('an empty priming event of the session the client never received is no lost event', () => {
    const s = session('gap-priming');
    s.serverEvent(30, A, priming(3));
    resumeAt(s, 4);
    assert.deepEqual(decide(s, 'both'), []);
  });

  it('events of the session the server sent and the client never received, skipped by the replay: replay_gap, counting only them', () => {
    const s = session('gap-real');
    s.serverEvent(30, A, progress(3)).serverEvent(40, A, progress(5));
    resumeAt(s, 6);
    const f = decide(s, 'both');
    assert.equal(f.length, 1, f.join('\n'));
    assert.match(f[0]!, /^replay_gap: .*resume from e2 \(seq 2\) continued at seq 6: 2 event\(s\) were never replayed/);
  });
});
