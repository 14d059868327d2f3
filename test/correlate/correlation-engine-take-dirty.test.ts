import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seedScenario } from '../fixtures/scenarios/scenarios.js';
import { SavedStates, harness } from './harness.js';

test('takeDirty stops once the saved forms reach maxBytes (at least one taken); the rest follow, nothing lost', () => {
  const h = harness();
  const keys: string[] = [];
  for (const id of ['S1', 'S2', 'S3', 'S4', 'S5']) {
    const s = seedScenario({ sessionId: id });
    keys.push(s.key!);
    h.ingest([...s.server, ...s.client]);
  }
  const size = (c: { state?: unknown; log?: Uint8Array[] }): number => (c.state instanceof Uint8Array ? c.state.length : 0) + (c.log ?? []).reduce((n, x) => n + x.length, 0);
  // One byte: one session per call.
  const first = h.engine.takeDirty(Infinity, 1);
  assert.equal(first.length, 1);
  // One and a half sessions' bytes (the sessions are alike): the second call takes two, the second crossing the limit.
  const two = h.engine.takeDirty(Infinity, size(first[0]!) * 1.5);
  assert.equal(two.length, 2);
  assert.equal(h.engine.dirtyCount, 2);
  const rest = h.engine.takeDirty();
  assert.equal(rest.length, 2);
  assert.deepEqual([...first, ...two, ...rest].map((c) => c.key).sort(), [...keys].sort());
  // Restored from what the slices saved, every session is what the engine holds.
  const disk = new SavedStates().apply([...first, ...two, ...rest]);
  const back = harness();
  for (const [k, v] of disk.byKey) back.engine.restore(k, v.state, v.log);
  for (const k of keys) assert.deepEqual(back.engine.lineage(k), h.engine.lineage(k));
});
