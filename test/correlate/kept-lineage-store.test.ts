import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CorrelationEngine } from '../../src/correlate/correlation-engine.js';
import type { Finding } from '../../src/model/finding.js';
import type { SessionLineage } from '../../src/model/lineage.js';
import { sessionAnswer } from '../../src/http/session-answer.js';
import { openStore } from '../../src/storage/open-store.js';
import type { Store } from '../../src/storage/store.js';
import { healthyResumeScenario, seedScenario } from '../fixtures/scenarios/scenarios.js';

const WINDOW = 10_000;
const COMPACT = 60_000;

/** The picture of a lineage: everything but where it came from. */
const picture = (l: SessionLineage): unknown => {
  const { source: _s, missing: _m, lastActivityMs: _t, ...rest } = l;
  return rest;
};

/** A detector's engine + store on a real SQLite file, on a manual clock; `commit` as the pipeline does. */
function detector(path: string, clock: { now: number }) {
  const store = openStore({ path, now: () => clock.now });
  const found: Finding[] = [];
  const engine = new CorrelationEngine({ now: () => clock.now }, { onFinding: (f) => found.push(f) }, { compactAfterMs: COMPACT, sessionTtlMs: 15 * 60_000 });
  for (const { key, state, log } of store.loadSessionStates()) engine.restore(key, state, log);
  const commit = (): void => {
    store.commit({ findings: found.splice(0), states: engine.takeDirty() });
  };
  const answer = (key: string) => sessionAnswer(key, (k) => engine.lineage(k), store);
  return { store, engine, commit, answer };
}

function tmpDb(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'fw-kept-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'forkwatch.db');
}

test('a session with findings keeps its whole lineage through compaction, a restart and expiry; source says which', (t) => {
  const path = tmpDb(t);
  const clock = { now: 1_900_000_000_000 };
  const s = seedScenario();
  const key = s.key!;
  let d = detector(path, clock);
  d.engine.ingest([...s.server, ...s.client]);
  clock.now += WINDOW;
  d.engine.tick();
  d.commit();
  const live = d.answer(key)!;
  assert.equal(live.lineage.source, 'live');
  assert.deepEqual(live.lineage.missing, []);
  assert.ok(live.lineage.events.length > 0 && live.lineage.resumes.length > 0 && live.lineage.requests.length > 0);
  assert.ok(live.lineage.incarnations.some((i) => i.created !== undefined));

  clock.now += COMPACT + 1;
  d.engine.tick();
  // Compacted, not yet committed: the engine still has the kept lineage in hand.
  const beforeCommit = d.answer(key)!;
  assert.equal(beforeCommit.lineage.source, 'compacted');
  assert.deepEqual(picture(beforeCommit.lineage), picture(live.lineage));
  d.commit();
  const compacted = d.answer(key)!;
  assert.equal(compacted.lineage.source, 'compacted');
  assert.deepEqual(compacted.lineage.missing, []);
  assert.deepEqual(picture(compacted.lineage), picture(live.lineage), 'the same picture after compaction');

  d.store.close();
  d = detector(path, clock);
  const restarted = d.answer(key)!;
  assert.equal(restarted.lineage.source, 'compacted');
  assert.deepEqual(picture(restarted.lineage), picture(live.lineage), 'the same picture after a restart');

  clock.now += 15 * 60_000;
  d.engine.tick();
  d.commit();
  assert.equal(d.engine.lineage(key), undefined, 'expired from the engine');
  const stored = d.answer(key)!;
  assert.equal(stored.lineage.source, 'stored');
  assert.deepEqual(stored.lineage.missing, []);
  assert.deepEqual(picture(stored.lineage), picture(live.lineage), 'the same picture once only storage has it');

  // Kept as long as the findings: retention takes both.
  d.store.prune(clock.now + 31 * 24 * 3_600_000);
  assert.equal(d.store.getSessionEvidence(key), undefined);
  assert.equal(d.answer(key), undefined);
  d.store.close();
});

test('a clean session compacts to its summary and says what is gone; nothing is kept for it in storage', (t) => {
  const path = tmpDb(t);
  const clock = { now: 1_900_000_000_000 };
  const s = healthyResumeScenario();
  const d = detector(path, clock);
  d.engine.ingest([...s.server, ...s.client]);
  clock.now += WINDOW;
  d.engine.tick();
  clock.now += COMPACT + 1;
  d.engine.tick();
  d.commit();
  const l = d.engine.lineage(s.key!)!;
  assert.equal(l.source, 'compacted');
  assert.deepEqual(l.missing, ['events', 'resumes', 'requests']);
  assert.deepEqual(l.events, []);
  assert.equal(d.store.getSessionEvidence(s.key!), undefined);
  d.store.close();
});

test('a compacted session woken by a late span and compacted again keeps both parts of its lineage', (t) => {
  const path = tmpDb(t);
  const clock = { now: 1_900_000_000_000 };
  const s = seedScenario();
  const key = s.key!;
  const d = detector(path, clock);
  const late = s.client.slice(-3);
  d.engine.ingest([...s.server, ...s.client.slice(0, -3)]);
  clock.now += WINDOW;
  d.engine.tick();
  const first = d.engine.lineage(key)!;
  clock.now += COMPACT + 1;
  d.engine.tick();
  d.commit();
  d.engine.ingest(late);
  clock.now += WINDOW;
  d.engine.tick();
  const woken = d.answer(key)!;
  assert.equal(woken.lineage.source, 'live');
  for (const e of first.events) assert.ok(woken.lineage.events.some((w) => w.spanId === e.spanId), 'earlier events still in the live answer');
  clock.now += COMPACT + 1;
  d.engine.tick();
  d.commit();
  const again = d.answer(key)!;
  assert.equal(again.lineage.source, 'compacted');
  assert.ok(again.lineage.events.length >= first.events.length);
  for (const e of first.events) assert.ok(again.lineage.events.some((w) => w.spanId === e.spanId));
  d.store.close();
});

test('the store bounds a kept lineage, keeping the cited spans over ordinary events', (t) => {
  const path = tmpDb(t);
  const clock = { now: 1_900_000_000_000 };
  const store: Store = openStore({ path, now: () => clock.now, maxKeptEvents: 5 });
  t.after(() => store.close());
  const ev = (i: number) => ({ traceId: 't', spanId: `s${i}`, side: 'client' as const, timeMs: i, eventId: `e${i}`, incarnation: 'a', seq: i, delivery: 'delivered' });
  const lineage: SessionLineage = {
    sessionKey: 'k',
    service: 'svc',
    incarnations: [{ incarnation: 'a', source: 'server', eventCount: 20 }],
    events: Array.from({ length: 20 }, (_, i) => ev(i)),
    resumes: [],
    requests: [],
    findingIds: ['f1'],
    lastActivityMs: 0,
  };
  const finding = {
    id: 'f1', kind: 'dedup_loss', service: 'svc', sessionKey: 'k', summary: 's', firstSeenMs: 0, detectedAtMs: clock.now,
    evidence: [{ traceId: 't', spanId: 's7', side: 'client', timeMs: 7, spanName: 'x', shows: 'y' }],
  } as unknown as Finding;
  store.commit({ findings: [finding], states: [{ key: 'k', evidence: lineage }] });
  const kept = store.getSessionEvidence('k')!;
  assert.equal(kept.events.length, 5);
  assert.equal(kept.eventsOmitted, 15);
  const ids = kept.events.map((e) => e.spanId);
  assert.ok(ids.includes('s7'), 'the cited span is kept');
  assert.ok(ids.includes('s0') && ids.includes('s19'), "the incarnation's first and last are kept");
  assert.deepEqual(ids.filter((i) => !['s0', 's7', 's19'].includes(i)), ['s17', 's18'], 'then the newest ordinary events');
});
