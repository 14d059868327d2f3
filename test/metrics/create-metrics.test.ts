import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import type { EngineStats } from '../../src/correlate/types.js';
import { createMetrics } from '../../src/metrics/create-metrics.js';
import { FORK_KINDS, REQUEST_ANOMALY_KINDS, RESUME_OUTCOMES, type Finding } from '../../src/model/finding.js';
import { sampleValue } from './scrape-format.js';

const TRACE = '0123456789abcdef'.repeat(2);
const KEY = 'feedfacefeedfacefeedfacefeedface';

function finding(over: Partial<Finding> = {}): Finding {
  return {
    id: 'f1',
    kind: 'replay_gap',
    service: 'svc',
    sessionKey: KEY,
    incarnation: 'incarnation-1',
    newIncarnation: 'incarnation-2',
    progressToken: 'tok-7',
    summary: 's',
    evidence: [{ traceId: TRACE, spanId: '1'.repeat(16), side: 'server', timeMs: 1, spanName: 'n', shows: 's' }],
    firstSeenMs: 1,
    detectedAtMs: 2,
    ...over,
  };
}

async function scrape(m: ReturnType<typeof createMetrics>, accept?: string): Promise<string> {
  return (await m.render(accept)).body;
}

test('a new service gets every kind and outcome series at 0; only new findings count', async () => {
  const m = createMetrics({ registry: new Registry(), version: '9.9.9' });
  m.onFinding(finding(), true);
  m.onFinding(finding(), false);
  m.onFinding(finding({ id: 'o1', kind: 'orphaned_progress_token' }), true);
  const body = await scrape(m);
  for (const kind of FORK_KINDS) {
    assert.equal(sampleValue(body, 'forkwatch_forks_total', `kind="${kind}",service="svc"`), kind === 'replay_gap' ? 1 : 0, kind);
  }
  for (const outcome of RESUME_OUTCOMES) {
    assert.equal(sampleValue(body, 'forkwatch_resumes_total', `outcome="${outcome}",service="svc"`), 0, outcome);
  }
  assert.equal(sampleValue(body, 'forkwatch_progress_tokens_orphaned_total', 'service="svc"'), 1);
  assert.equal(sampleValue(body, 'forkwatch_build_info', 'version="9.9.9"'), 1);
  assert.equal(sampleValue(body, 'forkwatch_ready'), 0);
  m.setReady(true);
  assert.equal(sampleValue(await scrape(m), 'forkwatch_ready'), 1);
});

test('stateless anomalies count in forkwatch_request_anomalies_total by kind, every kind at 0 for a new service, never as forks', async () => {
  const m = createMetrics({ registry: new Registry() });
  m.onFinding(finding({ id: 'd1', kind: 'duplicate_execution' }), true);
  m.onFinding(finding({ id: 'd1', kind: 'duplicate_execution' }), false);
  m.onFinding(finding({ id: 'o1', kind: 'orphaned_request' }), true);
  const body = await scrape(m);
  for (const kind of REQUEST_ANOMALY_KINDS) {
    assert.equal(sampleValue(body, 'forkwatch_request_anomalies_total', `kind="${kind}",service="svc"`), kind === 'work_after_cancel' ? 0 : 1, kind);
  }
  for (const kind of FORK_KINDS) assert.equal(sampleValue(body, 'forkwatch_forks_total', `kind="${kind}",service="svc"`), 0, kind);
});

test('no label carries a session key, incarnation, token or trace id; exemplars do carry the trace id', async () => {
  const m = createMetrics();
  m.onFinding(finding(), true, { lagMs: 500 });
  m.onFinding(finding({ id: 'o', kind: 'orphaned_progress_token' }), true);
  m.onResume('forked', 'svc', TRACE);
  const text = await scrape(m);
  const om = await scrape(m, 'application/openmetrics-text');
  for (const secret of [KEY, 'incarnation-1', 'incarnation-2', 'tok-7', TRACE]) {
    assert.ok(!text.includes(secret), `${secret} in text format`);
  }
  const withoutExemplars = om.split('\n').map((l) => l.split(' # ')[0]).join('\n');
  assert.ok(!withoutExemplars.includes(TRACE));
  assert.equal(om.split(`trace_id="${TRACE}"`).length - 1, 3, 'one exemplar each on forks, orphaned, resumes');
});

test('service label is bounded by maxServices', async () => {
  const m = createMetrics({ maxServices: 2 });
  for (const s of ['a', 'b', 'c', 'd']) m.onResume('resumed', s, TRACE);
  const body = await scrape(m);
  assert.equal(sampleValue(body, 'forkwatch_resumes_total', 'outcome="resumed",service="a"'), 1);
  assert.equal(sampleValue(body, 'forkwatch_resumes_total', 'outcome="resumed",service="other"'), 2);
  assert.equal(sampleValue(body, 'forkwatch_resumes_total', 'outcome="resumed",service="c"'), undefined);
});

test('stats gauges are read at scrape time, once per scrape, and a failing source does not fail the scrape', async () => {
  const m = createMetrics({ maxServices: 1 });
  let calls = 0;
  let stats: EngineStats = {
    sessions: 4,
    events: 40,
    pendingRequests: 2,
    activeSessionsByService: new Map([['a', 3], ['b', 1], ['c', 2]]),
    orphanedByService: new Map([['a', 1]]),
  };
  m.bindStats(() => {
    calls++;
    return stats;
  });
  let body = await scrape(m);
  assert.equal(calls, 1);
  assert.equal(sampleValue(body, 'forkwatch_tracked_sessions'), 4);
  assert.equal(sampleValue(body, 'forkwatch_tracked_events'), 40);
  assert.equal(sampleValue(body, 'forkwatch_pending_requests'), 2);
  assert.equal(sampleValue(body, 'forkwatch_sessions_active', 'service="a"'), 3);
  assert.equal(sampleValue(body, 'forkwatch_sessions_active', 'service="other"'), 3, 'overflow services summed');
  assert.equal(sampleValue(body, 'forkwatch_orphaned_progress_tokens', 'service="a"'), 1);

  stats = { ...stats, activeSessionsByService: new Map(), orphanedByService: new Map() };
  body = await scrape(m);
  assert.equal(calls, 2);
  assert.equal(sampleValue(body, 'forkwatch_orphaned_progress_tokens', 'service="a"'), 0, 'gone means 0, not absent');

  m.bindStats(() => {
    throw new Error('engine broke');
  });
  body = await scrape(m);
  assert.equal(sampleValue(body, 'forkwatch_ready'), 0);
  assert.equal(sampleValue(body, 'forkwatch_tracked_sessions'), 4, 'last good value kept');
});

test('ingest, drops, storage errors, lag histogram', async () => {
  let now = 1_700_000_000_000;
  const m = createMetrics({ now: () => now });
  m.onOtlpRequest({ status: 200, spans: 10, foreign: 4, rejected: 1, reason: 'invalid_span' });
  m.onOtlpRequest({ status: 413, reason: 'too_large', spans: 0, foreign: 0, rejected: 0 });
  now += 5000;
  m.onOtlpRequest({ status: 200, spans: 2, foreign: 0, rejected: 0 });
  m.onDrop('session_capacity', 3);
  m.storageError();
  m.setQueueSpans(17);
  m.onFinding(finding(), true, { lagMs: 1500 });
  const body = await scrape(m);
  assert.equal(sampleValue(body, 'forkwatch_spans_received_total'), 12);
  assert.equal(sampleValue(body, 'forkwatch_spans_ignored_total'), 4);
  assert.equal(sampleValue(body, 'forkwatch_spans_rejected_total', 'reason="invalid_span"'), 1);
  assert.equal(sampleValue(body, 'forkwatch_spans_rejected_total', 'reason="decode_error"'), 0);
  assert.equal(sampleValue(body, 'forkwatch_otlp_requests_total', 'code="200"'), 2);
  assert.equal(sampleValue(body, 'forkwatch_otlp_requests_total', 'code="413"'), 1);
  assert.equal(sampleValue(body, 'forkwatch_last_span_received_timestamp_seconds'), 1_700_000_005);
  assert.equal(sampleValue(body, 'forkwatch_correlation_dropped_total', 'reason="session_capacity"'), 3);
  assert.equal(sampleValue(body, 'forkwatch_correlation_dropped_total', 'reason="session_expired"'), 0);
  assert.equal(sampleValue(body, 'forkwatch_storage_errors_total'), 1);
  assert.equal(sampleValue(body, 'forkwatch_ingest_queue_spans'), 17);
  assert.equal(sampleValue(body, 'forkwatch_detection_lag_seconds_bucket', 'le="1"'), 0);
  assert.equal(sampleValue(body, 'forkwatch_detection_lag_seconds_bucket', 'le="2.5"'), 1);
  assert.equal(sampleValue(body, 'forkwatch_detection_lag_seconds_sum'), 1.5);
});

test('bad input never throws into the caller', () => {
  const m = createMetrics();
  assert.doesNotThrow(() => {
    m.onDrop('session_capacity', -1);
    m.onOtlpRequest({ status: Number.NaN, spans: -5, foreign: Number.NaN, rejected: 2, reason: 'bogus' as never });
    m.setQueueSpans(Number.NaN);
    m.onResume('not-an-outcome' as never, 'svc', 'not-a-trace');
    m.onFinding(finding({ evidence: [] }), true, { lagMs: Number.POSITIVE_INFINITY });
    m.onFinding({ ...finding(), service: undefined as never }, true);
    m.onFinding(finding({ kind: 'made_up' as never }), true);
  });
});

test('unknown kinds and outcomes mint no label values', async () => {
  const m = createMetrics();
  m.onResume('not-an-outcome' as never, 'svc', TRACE);
  m.onFinding(finding({ kind: 'made_up' as never }), true);
  const body = await scrape(m);
  assert.doesNotMatch(body, /not-an-outcome|made_up/);
});

test('two instances on separate registries do not collide, and the global registry stays empty', async () => {
  const a = createMetrics();
  const b = createMetrics();
  a.storageError();
  assert.equal(sampleValue(await scrape(a), 'forkwatch_storage_errors_total'), 1);
  assert.equal(sampleValue(await scrape(b), 'forkwatch_storage_errors_total'), 0);
  const { register } = await import('prom-client');
  assert.equal(register.getSingleMetric('forkwatch_forks_total'), undefined);
});

test('noteService creates the fork and resume series at 0 before any finding', async () => {
  const m = createMetrics({ registry: new Registry() });
  m.noteService('quiet-server');
  const text = (await m.render()).body;
  for (const kind of FORK_KINDS) assert.equal(sampleValue(text, 'forkwatch_forks_total', `kind="${kind}",service="quiet-server"`), 0);
  for (const outcome of RESUME_OUTCOMES) assert.equal(sampleValue(text, 'forkwatch_resumes_total', `outcome="${outcome}",service="quiet-server"`), 0);
  assert.equal(sampleValue(text, 'forkwatch_forks_total', 'kind="dedup_loss",service="never-seen"'), undefined);
});

test('processMetrics adds the process and Node.js families (CPU, memory, event loop, GC) a replica is sized by; without it there are none', async () => {
  const names = (body: string): string[] => [...body.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]!);
  const withProcess = names(await scrape(createMetrics({ registry: new Registry(), processMetrics: true })));
  for (const n of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_gc_duration_seconds']) {
    assert.ok(withProcess.includes(n), `${n} missing from ${withProcess.join(', ')}`);
  }
  assert.ok(withProcess.includes('forkwatch_spans_received_total'));
  const without = names(await scrape(createMetrics({ registry: new Registry() })));
  assert.deepEqual(without.filter((n) => !n.startsWith('forkwatch_')), []);
  // Scraped in OpenMetrics too (the exemplar format), where counters lose their _total in # TYPE.
  const om = (await createMetrics({ registry: new Registry(), processMetrics: true }).render('application/openmetrics-text; version=1.0.0')).body;
  assert.match(om, /^process_cpu_seconds_total \d/m);
});
