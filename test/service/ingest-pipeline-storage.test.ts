import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diag } from '@opentelemetry/api';
import { IngestPipeline, STORAGE_RETRY_MS, type EnginePort } from '../../src/service/ingest-pipeline.js';
import type { SessionStateChange, StoreCommit } from '../../src/storage/store.js';
import type { SpanRecord } from '../../src/model/span-record.js';

// The driver boundary: a store whose commits fail with SQLite's full-disk error until space is
// "freed" (no unprivileged way here to fill a real volume from a unit test).
function fullDiskStore(): { commit(b: StoreCommit): void; checkpoint(): void; full: boolean; checkpoints: number; committed: SessionStateChange[] } {
  return {
    full: true,
    checkpoints: 0,
    committed: [],
    commit(b) {
      if (this.full) throw Object.assign(new Error('storage error: commit: database or disk is full'), { code: 'FORKWATCH_ERR_STORAGE', cause: { code: 'SQLITE_FULL' } });
      this.committed.push(...b.states);
    },
    checkpoint() {
      this.checkpoints++;
    },
  };
}

function engine(): EnginePort {
  let dirty: SessionStateChange[] = [];
  return {
    ingest(spans: SpanRecord[]) {
      for (const s of spans) dirty.push({ key: s.spanId, state: '{}' });
    },
    tick() {},
    takeDirty() {
      const d = dirty;
      dirty = [];
      return d;
    },
  };
}

const span = (i: number): SpanRecord => ({ traceId: 'a'.repeat(32), spanId: String(i).padStart(16, '0'), parentSpanId: '', name: 'x', startMs: i, endMs: i, service: 's', attributes: {} });

test('a full disk: refusals name the storage error, the WAL is checkpointed before each retry, and ingest recovers on its own', async () => {
  const store = fullDiskStore();
  const p = new IngestPipeline({ engine: engine(), store, maxQueuedSpans: 100, commitIntervalMs: 1, logger: diag });
  const first = p.offer([span(1)]);
  assert.ok(first instanceof Promise);
  await assert.rejects(first);
  assert.equal(p.storageFailing, true);
  const refused = p.offer([span(2)]);
  assert.ok(typeof refused === 'object' && !(refused instanceof Promise) && 'storage' in refused, 'refused as storage, not as a full queue');
  assert.match(refused.storage, /SQLITE_FULL/);
  // Space is freed: the next retry (after a checkpoint) commits, and ingest is accepted again.
  store.full = false;
  const deadline = Date.now() + STORAGE_RETRY_MS * 4 + 5000;
  while (p.storageFailing && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(p.storageFailing, false, 'recovered without a restart');
  assert.ok(store.checkpoints >= 1, 'the WAL was checkpointed before the retry');
  assert.ok(store.committed.some((s) => s.key === span(1).spanId), 'the state of the refused batch was kept and written');
  const again = p.offer([span(3)]);
  assert.ok(again instanceof Promise);
  await again;
  p.close();
});

test('a failed commit of a whole state and the deltas after it is retried with all of them, in order', async () => {
  const store = fullDiskStore();
  let n = 0;
  let dirty: SessionStateChange[] = [];
  const eng: EnginePort = {
    // The engine's saved forms of one session: whole first, then deltas written against it.
    ingest() {
      dirty.push(n++ === 0 ? { key: 'k', state: 'whole' } : { key: 'k', log: [Buffer.from([4, n])] });
    },
    tick() {},
    takeDirty() {
      const d = dirty;
      dirty = [];
      return d;
    },
  };
  const p = new IngestPipeline({ engine: eng, store, maxQueuedSpans: 100, commitIntervalMs: 1, logger: diag });
  await assert.rejects(p.offer([span(1)]) as Promise<void>);
  eng.ingest([span(2)]);
  eng.ingest([span(3)]);
  store.full = false;
  const deadline = Date.now() + STORAGE_RETRY_MS * 4 + 5000;
  while (p.storageFailing && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(p.storageFailing, false);
  assert.deepEqual(store.committed, [{ key: 'k', state: 'whole', log: [Buffer.from([4, 2]), Buffer.from([4, 3])] }]);
  p.close();
});

test('kept lineages survive failed commits: two taken for one session before the retry are merged, neither lost', async () => {
  const store = fullDiskStore();
  const lineage = (eventId: string): SessionStateChange['evidence'] => ({
    sessionKey: 'k', service: 's', incarnations: [], resumes: [], requests: [], findingIds: [`f-${eventId}`], lastActivityMs: 0,
    events: [{ traceId: 't', spanId: `s-${eventId}`, side: 'server', timeMs: 0, eventId }],
  });
  let n = 0;
  const port: EnginePort = {
    ingest() {},
    tick() {},
    takeDirty() {
      n++;
      if (n === 1) return [{ key: 'k', state: '{"a":1}', evidence: lineage('e1') }];
      if (n === 2) return [{ key: 'k', state: null, evidence: lineage('e2') }];
      return [];
    },
  };
  const p = new IngestPipeline({ engine: port, store, maxQueuedSpans: 100, commitIntervalMs: 1, logger: diag });
  await assert.rejects(p.offer([span(1)]) as Promise<unknown>);
  store.full = false;
  const deadline = Date.now() + STORAGE_RETRY_MS * 4 + 5000;
  while ((p.storageFailing || store.committed.length === 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const k = store.committed.filter((c) => c.key === 'k');
  const evidence = k.flatMap((c) => c.evidence?.events.map((e) => e.eventId) ?? []);
  assert.deepEqual(evidence.sort(), ['e1', 'e2'], 'both kept lineages reach the store');
  p.close();
});
