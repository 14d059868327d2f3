import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionScript, healthyResumeScenario, inc, seedScenario } from '../fixtures/scenarios/scenarios.js';
import { SavedStates, harness } from './harness.js';

const WINDOW = 10_000;

/** A healthy session as the instrumentation exports it: created, initialize sent/received/settled, ended; no resume. */
function healthySession(id: string) {
  const s = new SessionScript({ key: `healthy-${id}`.padEnd(32, '0') });
  const A = inc(`${id}:A`);
  s.received(0, '0', 'initialize', A).created(1, A, 'initialize').sent(0, '0', 'initialize');
  s.settled(5, '0', 'initialize', 'answered');
  s.ended(50, A, 'closed');
  return s.done();
}

test('a healthy session decided is not saved again; restored after a restart it is decided again to the same nothing', () => {
  const h = harness();
  const keys = ['a', 'b', 'c'].map((id) => {
    const s = healthySession(id);
    h.ingest([...s.server, ...s.client]);
    return s.key!;
  });
  const disk = new SavedStates().apply(h.engine.takeDirty());
  assert.equal(disk.byKey.size, 3);
  h.advance(WINDOW);
  assert.deepEqual(h.findings, []);
  assert.deepEqual(h.resumes, []);
  // The decision only cleared the pending flag: nothing to save (it was a delta per session).
  assert.equal(h.engine.dirtyCount, 0);
  assert.deepEqual(h.engine.takeDirty(), []);
  // kill -9 now: the stored states still say pending; a restarted engine decides them again.
  const back = harness({}, h.now());
  disk.restoreInto(back.engine);
  back.advance(0);
  assert.deepEqual(back.findings, []);
  assert.deepEqual(back.resumes, []);
  assert.deepEqual(back.engine.takeDirty(), []);
  for (const k of keys) assert.deepEqual(back.engine.lineage(k), h.engine.lineage(k));
  // A later span is saved as a delta against the stored state, which then reads back as the engine holds it.
  const more = new SessionScript({ key: keys[0] }).sent(60, '1', 'tools/list');
  h.ingest(more.done().client);
  disk.apply(h.engine.takeDirty());
  assert.equal(disk.last.length, 1);
  assert.ok(disk.last[0]!.log !== undefined, 'a delta, not the whole state');
  const again = harness({}, h.now());
  disk.restoreInto(again.engine);
  assert.deepEqual(again.engine.lineage(keys[0]!), h.engine.lineage(keys[0]!));
  // Compaction still writes the compacted state.
  h.advance(10 * 60_000);
  assert.ok(h.engine.takeDirty().some((c) => c.key === keys[1] && typeof c.state === 'string'));
});

test('a decision that reports a finding or counts a resume is saved, so a restart repeats neither', () => {
  const h = harness();
  const fork = seedScenario({ sessionId: 'F' });
  const resumed = healthyResumeScenario({ sessionId: 'R' });
  h.ingest([...fork.server, ...fork.client, ...resumed.server, ...resumed.client]);
  const disk = new SavedStates().apply(h.engine.takeDirty());
  h.advance(WINDOW);
  assert.ok(h.findings.length > 0);
  assert.ok(h.resumes.some((r) => r.outcome === 'resumed'));
  const saved = h.engine.takeDirty();
  assert.deepEqual(saved.map((c) => c.key).sort(), [fork.key!, resumed.key!].sort());
  disk.apply(saved);
  const back = harness({}, h.now());
  disk.restoreInto(back.engine);
  back.advance(WINDOW);
  assert.deepEqual(back.findings, []);
  assert.deepEqual(back.updates, []);
  assert.deepEqual(back.resumes, []);
});
