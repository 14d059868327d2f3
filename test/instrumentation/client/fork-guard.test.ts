import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ForkGuard } from '../../../src/instrumentation/client/fork-guard.js';
import { SessionForkError, isSessionForkError } from '../../../src/instrumentation/client/session-fork-error.js';
import type { SessionForkKind } from '../../../src/instrumentation/client/types.js';

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
});
