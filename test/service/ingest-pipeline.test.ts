import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diag } from '@opentelemetry/api';
import { IngestPipeline, type EnginePort } from '../../src/service/ingest-pipeline.js';
import { openStore } from '../../src/storage/open-store.js';
import type { Store, SessionStateChange } from '../../src/storage/store.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import type { Finding } from '../../src/model/finding.js';

function span(i: number): SpanRecord {
  return { traceId: 'a'.repeat(32), spanId: i.toString(16).padStart(16, '0'), parentSpanId: '', name: 'forkwatch.sse.event', startMs: i, endMs: i, service: 's', attributes: {} };
}

/** A stand-in engine: each ingested span marks its session dirty. */
function engine(): EnginePort & { ingested: number } {
  let dirty: SessionStateChange[] = [];
  return {
    ingested: 0,
    ingest(spans) {
      this.ingested += spans.length;
      for (const s of spans) dirty.push({ key: `k${s.spanId}`, state: JSON.stringify({ n: s.startMs }) });
    },
    tick() {},
    takeDirty() {
      const d = dirty;
      dirty = [];
      return d;
    },
  };
}

const finding = (id: string): Finding => ({ id, kind: 'dedup_loss', service: 's', sessionKey: 'k', summary: 'x', evidence: [], firstSeenMs: 1, detectedAtMs: 2 });

function store(): Store {
  return openStore({ path: join(mkdtempSync(join(tmpdir(), 'fw-pipe-')), 'db.sqlite') });
}

test('a batch is acknowledged only after the commit holding its state, and batches share commits', async () => {
  const s = store();
  let commits = 0;
  const commit = s.commit.bind(s);
  s.commit = (b) => {
    commits++;
    commit(b);
  };
  const p = new IngestPipeline({ engine: engine(), store: s, maxQueuedSpans: 100, commitIntervalMs: 5, logger: diag });
  const a = p.offer([span(1), span(2)]);
  const b = p.offer([span(3)]);
  assert.notEqual(a, 'overloaded');
  assert.equal([...s.loadSessionStates()].length, 0, 'nothing is written before the commit');
  await Promise.all([a, b]);
  assert.equal(commits, 1, 'one group commit for both requests');
  assert.equal([...s.loadSessionStates()].length, 3);
  p.close();
  s.close();
});

test('past maxQueuedSpans the pipeline answers overloaded, and accepts again after the commit', async () => {
  const s = store();
  const p = new IngestPipeline({ engine: engine(), store: s, maxQueuedSpans: 3, commitIntervalMs: 5, logger: diag });
  const a = p.offer([span(1), span(2)]);
  assert.equal(p.offer([span(3), span(4)]), 'overloaded');
  await a;
  const b = p.offer([span(3), span(4)]);
  assert.notEqual(b, 'overloaded');
  await b;
  p.close();
  s.close();
});

test('a failing store refuses new batches, keeps what it holds, and commits it on recovery', async () => {
  const s = store();
  let failures = 2;
  const commit = s.commit.bind(s);
  s.commit = (b) => {
    if (failures-- > 0) throw new Error('disk full');
    commit(b);
  };
  const errors: unknown[] = [];
  const p = new IngestPipeline({ engine: engine(), store: s, maxQueuedSpans: 100, commitIntervalMs: 5, logger: diag, onStorageError: (e) => errors.push(e) });
  p.addFinding(finding('f1'));
  const a = p.offer([span(1)]);
  await assert.rejects(a as Promise<void>, /disk full/);
  assert.equal(p.storageFailing, true);
  assert.deepEqual(p.offer([span(2)]), { storage: 'disk full' }, 'no new batch while storage fails, refused as storage');
  // The retry runs after STORAGE_RETRY_MS; the second attempt fails too, the third succeeds.
  for (let i = 0; i < 40 && p.storageFailing; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(p.storageFailing, false);
  assert.equal(errors.length, 2);
  assert.ok(s.getFinding('f1'), 'the finding held in memory was committed');
  assert.equal([...s.loadSessionStates()].length, 1, 'the state of the refused-then-acknowledged batch was committed');
  p.close();
  s.close();
});
