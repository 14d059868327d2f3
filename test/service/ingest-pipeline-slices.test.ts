import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diag } from '@opentelemetry/api';
import { COMMIT_SLICE_BYTES, COMMIT_SLICE_STATES, IngestPipeline, type EnginePort } from '../../src/service/ingest-pipeline.js';
import { openStore } from '../../src/storage/open-store.js';
import type { SessionStateChange } from '../../src/storage/store.js';
import type { SpanRecord } from '../../src/model/span-record.js';

function span(i: number): SpanRecord {
  return { traceId: 'a'.repeat(32), spanId: i.toString(16).padStart(16, '0'), parentSpanId: '', name: 'forkwatch.sse.event', startMs: i, endMs: i, service: 's', attributes: {} };
}

/** A stand-in engine that honours takeDirty's `max` and `maxBytes`, as CorrelationEngine does; each state `pad` characters longer. */
function engine(pad = 0): EnginePort {
  const dirty = new Map<string, SessionStateChange>();
  return {
    ingest(spans) {
      for (const s of spans) dirty.set(`k${s.spanId}`, { key: `k${s.spanId}`, state: JSON.stringify({ n: s.startMs, pad: 'x'.repeat(pad) }) });
    },
    tick() {},
    takeDirty(max = Infinity, maxBytes = Infinity) {
      const out: SessionStateChange[] = [];
      let bytes = 0;
      for (const [k, v] of dirty) {
        if (out.length >= max || bytes >= maxBytes) break;
        dirty.delete(k);
        out.push(v);
        bytes += (v.state as string).length;
      }
      return out;
    },
    get dirtyCount() {
      return dirty.size;
    },
  };
}

test('a large backlog is committed in slices with the event loop free between them; the batch is answered after the last', async () => {
  const s = openStore({ path: join(mkdtempSync(join(tmpdir(), 'fw-slices-')), 'db.sqlite') });
  const events: string[] = [];
  const commit = s.commit.bind(s);
  s.commit = (b) => {
    events.push(`commit ${b.states.length}`);
    commit(b);
  };
  const p = new IngestPipeline({ engine: engine(), store: s, maxQueuedSpans: 10_000, commitIntervalMs: 1, logger: diag });
  const n = COMMIT_SLICE_STATES * 5 + 3;
  const done = p.offer(Array.from({ length: n }, (_, i) => span(i)));
  assert.notEqual(done, 'overloaded');
  // Something else waiting on the loop (a /healthz request) runs between slices.
  const probe = (): void => {
    events.push('loop');
    if (!events.includes('answered')) setImmediate(probe);
  };
  setImmediate(probe);
  await (done as Promise<void>).then(() => events.push('answered'));
  const commits = events.filter((e) => e.startsWith('commit'));
  assert.equal(commits.length, 6);
  for (const c of commits) assert.ok(Number(c.split(' ')[1]) <= COMMIT_SLICE_STATES, c);
  const first = events.indexOf(commits[0]!);
  const last = events.lastIndexOf(commits[commits.length - 1]!);
  assert.ok(events.slice(first, last).includes('loop'), `the loop ran between slices: ${events.join(', ')}`);
  assert.ok(events.indexOf('answered') > last, 'answered after the last slice');
  assert.equal([...s.loadSessionStates()].length, n);
  p.close();
  s.close();
});

test('a slice ends once its states reach COMMIT_SLICE_BYTES: large states go a few per transaction', async () => {
  const s = openStore({ path: join(mkdtempSync(join(tmpdir(), 'fw-slices-')), 'db.sqlite') });
  const sizes: number[] = [];
  const commit = s.commit.bind(s);
  s.commit = (b) => {
    sizes.push(b.states.length);
    commit(b);
  };
  // Each state a little over a third of the budget: three reach it.
  const pad = Math.ceil(COMMIT_SLICE_BYTES / 3) + 1;
  const p = new IngestPipeline({ engine: engine(pad), store: s, maxQueuedSpans: 10_000, commitIntervalMs: 1, logger: diag });
  const done = p.offer(Array.from({ length: 10 }, (_, i) => span(i)));
  assert.notEqual(done, 'overloaded');
  await done;
  assert.deepEqual(sizes, [3, 3, 3, 1]);
  assert.equal([...s.loadSessionStates()].length, 10);
  p.close();
  s.close();
});
