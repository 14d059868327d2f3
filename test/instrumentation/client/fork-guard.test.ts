import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ForkGuard } from '../../../packages/instrumentation/src/client/fork-guard.js';
import { payloadDigest } from '../../../packages/instrumentation/src/common/session-key.js';
import { SessionForkError, isSessionForkError } from '../../../packages/instrumentation/src/client/session-fork-error.js';
import type { SessionForkKind } from '../../../packages/instrumentation/src/client/types.js';

const INC = '0123456789abcdef';
const kindOf = (f: () => unknown): SessionForkKind | undefined => {
  try {
    f();
  } catch (e) {
    if (isSessionForkError(e)) return e.kind;
    throw e;
  }
  return undefined;
};

describe('ForkGuard (the seed ResumableStream)', () => {
  it('refuses a resume under another session id, incarnation, or absent from the log', () => {
    const g = new ForkGuard('S1', INC, { sessionKey: 'k' });
    assert.equal(kindOf(() => g.resume({ serverSessionId: 'S2', serverIncarnation: INC, lastEventId: 'e3' })), 'session_id_changed');
    assert.equal(kindOf(() => g.resume({ serverSessionId: 'S1', serverIncarnation: 'ffffffffffffffff', lastEventId: 'e3' })), 'incarnation_changed');
    assert.equal(kindOf(() => g.resume({ serverSessionId: 'S1', serverIncarnation: INC, lastEventId: 'e3', serverLogHas: false })), 'replay_gap');
    assert.equal(kindOf(() => g.resume({ serverSessionId: 'S1', serverIncarnation: INC, lastEventId: 'e3' })), undefined);
    const err = (() => {
      try {
        g.resume({ serverSessionId: 'S2', serverIncarnation: INC, lastEventId: 'e3' });
      } catch (e) {
        return e as SessionForkError;
      }
    })()!;
    assert.ok(err instanceof SessionForkError && err instanceof Error);
    assert.equal(err.sessionKey, 'k');
    assert.equal(err.lastEventId, 'e3');
  });

  it('dedups on (session, incarnation, event id)', () => {
    const g = new ForkGuard('S1', INC);
    assert.equal(g.acceptEvent('e1'), true);
    assert.equal(g.acceptEvent('e1'), false);
    assert.equal(g.acceptEvent('e2'), true);
    // Same id string under another incarnation of the same id is a different event.
    const reborn = new ForkGuard('S1', 'ffffffffffffffff');
    assert.equal(reborn.acceptEvent('e1'), true);
  });

  it('raises sequence_regression on counter ids after a resume, with no incarnation at all', () => {
    const g = new ForkGuard('S1', undefined);
    for (const id of ['e1', 'e2', 'e3']) assert.equal(g.acceptEvent(id), true);
    g.resume({ serverSessionId: 'S1', serverIncarnation: undefined, lastEventId: 'e3' });
    assert.equal(kindOf(() => g.acceptEvent('e1')), 'sequence_regression');
  });

  it('accepts the continuation after a healthy resume, and a stale cursor is itself a regression', () => {
    const g = new ForkGuard('S1', undefined);
    g.acceptEvent('e1');
    g.acceptEvent('e2');
    g.resume({ serverSessionId: undefined, serverIncarnation: undefined, lastEventId: 'e2' });
    assert.equal(g.acceptEvent('e3'), true);
    assert.equal(kindOf(() => g.resume({ serverSessionId: 'S1', serverIncarnation: undefined, lastEventId: 'e1' })), 'sequence_regression');
  });

  it('checks sequences per stream', () => {
    const g = new ForkGuard('S1', undefined);
    g.acceptEvent('e5', 'post:1');
    g.acceptEvent('e1', 'get'); // another stream's own counter: no regression
    g.resume({ serverSessionId: 'S1', serverIncarnation: undefined, lastEventId: 'e5', streamId: 'post:1' });
    assert.equal(g.acceptEvent('e6', 'post:1'), true);
  });

  it('adopts the first incarnation seen and refuses guarded ids of another', () => {
    const g = new ForkGuard('S1', undefined);
    g.checkIncarnation(INC);
    assert.equal(g.incarnation, INC);
    assert.equal(g.acceptEvent(`${INC}-1`), true);
    assert.equal(kindOf(() => g.acceptEvent('ffffffffffffffff-2')), 'incarnation_changed');
    assert.equal(kindOf(() => g.checkIncarnation(undefined)), undefined, 'an absent header is no change');
  });

  it('stays bounded', () => {
    const g = new ForkGuard('S1', undefined, { maxSeenEvents: 10 });
    for (let i = 0; i < 1000; i++) g.acceptEvent(`x${i}`);
    assert.equal((g as unknown as { seen: { size: number } }).seen.size, 10);
  });

  describe('against a server that sends no incarnation (counter ids are a per-session sequence)', () => {
    const d = (data: string): string => payloadDigest(data);
    const progress = (token: number, n: number): string => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: n } });
    const result = (id: number, text: string): string => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });

    /** The seed's first life: initialize (priming e1, response e2), call 1 (priming e3, progress e4..e7). */
    function firstLife(): ForkGuard {
      const g = new ForkGuard('S1', undefined);
      assert.equal(g.acceptEvent('e1', 'post:0', d('')), true);
      assert.equal(g.acceptEvent('e2', 'post:0', d(result(0, 'init'))), true);
      assert.equal(g.acceptEvent('e3', 'post:1', d('')), true);
      for (let n = 1; n <= 4; n++) assert.equal(g.acceptEvent(`e${n + 3}`, 'post:1', d(progress(1, n))), true);
      return g;
    }

    it('raises sequence_regression when, after a resume, the next call\'s new stream restarts at e1', () => {
      const g = firstLife();
      // The rehydrated life answers the resume 200 with nothing to replay (fresh, empty log).
      g.resume({ serverSessionId: 'S1', serverIncarnation: undefined, lastEventId: 'e7', streamId: 'post:1' });
      const sentAt = g.highWaterMark();
      assert.deepEqual(sentAt, { counter: 7 });
      g.openStream('post:2', sentAt);
      // Its priming e1 is byte-identical to the old e1: a new stream never replays, so it is no duplicate.
      assert.equal(kindOf(() => g.acceptEvent('e1', 'post:2', d(''))), 'sequence_regression');
    });

    it('raises on a new stream without any resume too, but not on one that continues the sequence', () => {
      const g = firstLife();
      g.openStream('post:2');
      assert.equal(kindOf(() => g.acceptEvent('e2', 'post:2', d(progress(2, 1)))), 'sequence_regression');
      const h = firstLife();
      h.openStream('post:2');
      assert.equal(h.acceptEvent('e8', 'post:2', d('')), true);
      assert.equal(h.acceptEvent('e9', 'post:2', d(progress(2, 1))), true);
    });

    it('takes the floor of a new stream from when its request was sent (streams interleave)', () => {
      const g = firstLife();
      const sentAt = g.highWaterMark(); // 7
      // Delivered on another stream while the POST was in flight; stored before the POST arrived.
      assert.equal(g.acceptEvent('e9', 'get', d(progress(9, 1))), true);
      g.openStream('post:2', sentAt);
      assert.equal(g.acceptEvent('e8', 'post:2', d('')), true, 'e8 > 7: no regression although e9 was seen');
    });

    it('an id seen before with another payload digest is a fork, not a silent drop', () => {
      const g = firstLife();
      // No resume, no new stream: the same id under different content on a running stream.
      assert.equal(kindOf(() => g.acceptEvent('e5', 'post:1', d(progress(2, 2)))), 'sequence_regression');
      const h = firstLife();
      h.resume({ serverSessionId: 'S1', serverIncarnation: undefined, lastEventId: 'e7', streamId: 'post:1' });
      assert.equal(kindOf(() => h.acceptEvent('e6', 'post:1', d(progress(2, 3)))), 'sequence_regression');
    });

    it('drops an exact duplicate (same id, same digest) silently, then goes on', () => {
      const g = firstLife();
      g.resume({ serverSessionId: 'S1', serverIncarnation: undefined, lastEventId: 'e7', streamId: 'post:1' });
      // A sloppy store replays the cursor itself, byte for byte, then the missing events.
      assert.equal(g.acceptEvent('e7', 'post:1', d(progress(1, 4))), false);
      assert.equal(g.acceptEvent('e8', 'post:1', d(progress(1, 5))), true);
      assert.equal(g.acceptEvent('e9', 'post:1', d(result(1, 'done'))), true);
      // Outside a resume too (server-everything replays every stream's events).
      assert.equal(g.acceptEvent('e4', 'get', d(progress(1, 1))), false);
    });

    it('keeps a healthy resume: exactly the missing events, the sequence continuing', () => {
      const g = firstLife();
      g.acceptEvent('e8', 'get', d(progress(9, 1))); // another stream moved the session past the cursor
      g.resume({ serverSessionId: 'S1', serverIncarnation: undefined, lastEventId: 'e7', streamId: 'post:1' });
      assert.equal(g.acceptEvent('e9', 'post:1', d(progress(1, 5))), true);
      assert.equal(g.acceptEvent('e10', 'post:1', d(result(1, 'done'))), true);
    });

    it('flags nothing on SDK-style ids (<stream>_<ms>_<rand>), which carry no sequence', () => {
      const g = new ForkGuard('S1', undefined);
      const id = (stream: string, n: number): string => `${stream}_${1700000000000 + n}_${(n * 7919).toString(36)}`;
      for (let n = 1; n <= 5; n++) assert.equal(g.acceptEvent(id('aaa', n), 'post:1', d(progress(1, n))), true);
      g.resume({ serverSessionId: 'S1', serverIncarnation: undefined, lastEventId: id('aaa', 5), streamId: 'post:1' });
      assert.equal(g.acceptEvent(id('aaa', 6), 'post:1', d(result(1, 'done'))), true);
      assert.deepEqual(g.highWaterMark(), {});
      g.openStream('post:2');
      assert.equal(g.acceptEvent(id('bbb', 1), 'post:2', d('')), true);
      assert.equal(g.acceptEvent(id('aaa', 6), 'post:1', d(result(1, 'done'))), false, 'an exact duplicate is still dropped');
    });

    it('keeps guarded ids (<incarnation>-<n>) to the same per-session rule', () => {
      const g = new ForkGuard('S1', INC);
      g.acceptEvent(`${INC}-1`, 'post:0', d(''));
      g.acceptEvent(`${INC}-2`, 'post:0', d(result(0, 'init')));
      g.openStream('post:1');
      assert.equal(kindOf(() => g.acceptEvent(`${INC}-1`, 'post:1', d(''))), 'sequence_regression');
    });
  });
});
