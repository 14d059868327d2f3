import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiServer, type ApiServerOptions } from '../../src/http/api-server.js';
import { createMetrics } from '../../src/metrics/create-metrics.js';
import type { Finding } from '../../src/model/finding.js';
import type { SessionLineage } from '../../src/model/lineage.js';
import { openStore } from '../../src/storage/open-store.js';
import type { Store } from '../../src/storage/store.js';

const KEY = 'a1'.repeat(16);
const TRACE = 'cd'.repeat(16);
const NOW = Date.parse('2026-01-01T12:00:00Z');

function finding(over: Partial<Finding> & { id: string }): Finding {
  return {
    kind: 'minted_on_resume',
    service: 'svc-a',
    sessionKey: KEY,
    incarnation: 'inc1',
    newIncarnation: 'inc2',
    summary: 'server minted incarnation inc2 on a resume of inc1',
    evidence: [{ traceId: TRACE, spanId: '1'.repeat(16), side: 'server', timeMs: NOW - 5000, spanName: 'forkwatch.session.created', shows: 'created on GET resume' }],
    firstSeenMs: NOW - 5000,
    detectedAtMs: NOW - 4000,
    ...over,
  };
}

interface Started {
  url: string;
  store: Store;
}

async function start(t: { after(fn: () => unknown): void }, over: Partial<ApiServerOptions> = {}): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-api-'));
  const store = openStore({ path: join(dir, 'fw.db') });
  const app = await createApiServer({ store, lineage: () => undefined, ready: () => true, now: () => NOW, ...over });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(async () => {
    await app.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const addr = app.server.address();
  assert.ok(addr && typeof addr === 'object');
  return { url: `http://127.0.0.1:${addr.port}`, store };
}

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  const isJson = (res.headers.get('content-type') ?? '').includes('json');
  return { status: res.status, body: isJson ? JSON.parse(text) : text, headers: res.headers };
}

function assertError(r: { status: number; body: any }, status: number, code: string): void {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.code, code);
  assert.equal(r.body.statusCode, status);
  assert.equal(typeof r.body.message, 'string');
}

test('findings: list with links, filters, paging, and one finding with its evidence', async (t) => {
  const { url, store } = await start(t);
  store.commit({
    findings: [
      finding({ id: '0000000000000001', detectedAtMs: NOW - 3 * 3_600_000 }),
      finding({ id: '0000000000000002', kind: 'replay_gap', detectedAtMs: NOW - 2000 }),
      finding({ id: '0000000000000003', kind: 'orphaned_progress_token', service: 'svc-b', progressToken: '7', detectedAtMs: NOW - 1000 }),
    ],
    states: [],
  });

  let r = await get(`${url}/api/v1/findings`);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('cache-control'), 'no-store');
  assert.deepEqual(r.body.items.map((f: Finding) => f.id), ['0000000000000003', '0000000000000002', '0000000000000001']);
  assert.equal(r.body.nextCursor, null);
  assert.deepEqual(r.body.items[0].links, { self: '/api/v1/findings/0000000000000003', session: `/api/v1/sessions/${KEY}` });

  r = await get(`${url}/api/v1/findings?kind=minted_on_resume,replay_gap&since=1h`);
  assert.deepEqual(r.body.items.map((f: Finding) => f.id), ['0000000000000002']);
  r = await get(`${url}/api/v1/findings?kind=minted_on_resume&kind=orphaned_progress_token`);
  assert.deepEqual(r.body.items.map((f: Finding) => f.id), ['0000000000000003', '0000000000000001']);
  r = await get(`${url}/api/v1/findings?service=svc-b`);
  assert.deepEqual(r.body.items.map((f: Finding) => f.id), ['0000000000000003']);
  r = await get(`${url}/api/v1/findings?since=${encodeURIComponent(new Date(NOW - 1500).toISOString())}`);
  assert.deepEqual(r.body.items.map((f: Finding) => f.id), ['0000000000000003']);

  const seen: string[] = [];
  let next: string | null = null;
  do {
    r = await get(`${url}/api/v1/findings?limit=2${next ? `&cursor=${encodeURIComponent(next)}` : ''}`);
    assert.equal(r.status, 200);
    seen.push(...r.body.items.map((f: Finding) => f.id));
    next = r.body.nextCursor;
  } while (next);
  assert.deepEqual(seen, ['0000000000000003', '0000000000000002', '0000000000000001']);

  r = await get(`${url}/api/v1/findings/0000000000000002`);
  assert.equal(r.status, 200);
  assert.equal(r.body.kind, 'replay_gap');
  assert.equal(r.body.evidence[0].traceId, TRACE);
  assert.equal(r.body.evidence[0].shows, 'created on GET resume');
  assert.equal(r.body.links.self, '/api/v1/findings/0000000000000002');
});

test('bad queries and unknown ids answer coded errors', async (t) => {
  const { url } = await start(t);
  for (const q of ['kind=bogus', 'limit=0', 'limit=5000', 'limit=abc', 'since=later', 'cursor=%21%21', 'service=a&service=b']) {
    assertError(await get(`${url}/api/v1/findings?${q}`), 400, 'FORKWATCH_ERR_BAD_QUERY');
  }
  assertError(await get(`${url}/api/v1/findings/ffffffffffffffff`), 404, 'FORKWATCH_ERR_NOT_FOUND');
  assertError(await get(`${url}/api/v1/sessions/${'0'.repeat(32)}`), 404, 'FORKWATCH_ERR_NOT_FOUND');
  assertError(await get(`${url}/nowhere`), 404, 'FORKWATCH_ERR_NOT_FOUND');
  assertError(await get(`${url}/metrics`), 404, 'FORKWATCH_ERR_NOT_FOUND'); // no metrics configured
  const post = async (body: string) => {
    const res = await fetch(`${url}/api/v1/findings`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    return { status: res.status, body: (await res.json()) as unknown };
  };
  assertError(await post('{}'), 404, 'FORKWATCH_ERR_NOT_FOUND');
  // fastify's own body-parse error is answered in our shape too
  assertError(await post('{'), 400, 'FORKWATCH_ERR_BAD_QUERY');
});

test('a failing store answers 500 with the storage code; a throwing lineage answers FORKWATCH_ERR_INTERNAL', async (t) => {
  const { url, store } = await start(t, {
    lineage: () => {
      throw new Error('engine bug');
    },
  });
  store.close(); // every later read fails inside SQLite
  assertError(await get(`${url}/api/v1/findings`), 500, 'FORKWATCH_ERR_STORAGE');
  const { url: url2 } = await start(t, {
    lineage: () => {
      throw new Error('engine bug');
    },
  });
  const r = await get(`${url2}/api/v1/sessions/${KEY}`);
  assertError(r, 500, 'FORKWATCH_ERR_INTERNAL');
  assert.doesNotMatch(r.body.message, /engine bug/, 'internals stay in the log');
});

test('sessions: live lineage when the engine has it, else rebuilt from stored findings', async (t) => {
  const live: SessionLineage = {
    sessionKey: KEY,
    service: 'svc-a',
    incarnations: [{ incarnation: 'inc1', source: 'server', createdBy: 'initialize', eventCount: 7, lastSeq: 7 }],
    events: [],
    resumes: [],
    requests: [],
    findingIds: ['0000000000000001'],
    lastActivityMs: NOW,
  };
  let known = true;
  const { url, store } = await start(t, { lineage: (k) => (known && k === KEY ? live : undefined) });
  store.commit({
    findings: [
      finding({ id: '0000000000000001' }),
      finding({ id: '0000000000000002', kind: 'orphaned_progress_token', progressToken: '3', requestId: '3', incarnation: 'inc1', newIncarnation: undefined }),
    ],
    states: [],
  });
  let r = await get(`${url}/api/v1/sessions/${KEY}`);
  assert.equal(r.status, 200);
  assert.equal(r.body.source, 'live');
  assert.deepEqual(r.body.missing, []);
  assert.equal(r.body.incarnations[0].eventCount, 7);
  assert.deepEqual(r.body.findings.map((f: Finding) => f.id), ['0000000000000001', '0000000000000002']);
  assert.equal(r.body.findings[0].links.session, `/api/v1/sessions/${KEY}`);

  known = false;
  r = await get(`${url}/api/v1/sessions/${KEY}`);
  assert.equal(r.status, 200);
  assert.equal(r.body.source, 'stored');
  assert.deepEqual(r.body.missing, ['events', 'resumes', 'requests'], 'no lineage kept: says what is gone');
  assert.equal(r.body.sessionKey, KEY);
  assert.deepEqual(r.body.incarnations.map((i: { incarnation: string }) => i.incarnation), ['inc1', 'inc2']);
  assert.deepEqual(r.body.requests, [{ requestId: '3', state: 'orphaned', progressToken: '3', incarnation: 'inc1' }]);
  assert.deepEqual(r.body.findingIds, ['0000000000000001', '0000000000000002']);
});

test('health, readiness, and /metrics in both formats', async (t) => {
  let ready = false;
  const metrics = createMetrics();
  metrics.onResume('forked', 'svc-a', TRACE);
  const { url } = await start(t, { ready: () => ready, metrics });
  assert.deepEqual((await get(`${url}/healthz`)).body, { status: 'ok' });
  assert.equal((await get(`${url}/readyz`)).status, 503);
  ready = true;
  assert.equal((await get(`${url}/readyz`)).status, 200);

  const text = await get(`${url}/metrics`);
  assert.equal(text.status, 200);
  assert.equal(text.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  assert.match(text.body, /^forkwatch_resumes_total\{outcome="forked",service="svc-a"\} 1$/m);
  const om = await get(`${url}/metrics`, {
    accept: 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1',
  });
  assert.equal(om.headers.get('content-type'), 'application/openmetrics-text; version=1.0.0; charset=utf-8');
  assert.match(om.body, new RegExp(`^forkwatch_resumes_total\\{outcome="forked",service="svc-a"\\} 1 # \\{trace_id="${TRACE}"\\}`, 'm'));
  assert.ok(om.body.endsWith('# EOF\n'));
});

test('auth: /api needs the bearer token; probes and /metrics stay open unless metricsAuth', async (t) => {
  const metrics = createMetrics();
  const { url } = await start(t, { authToken: 's3cret', metrics });
  const r = await get(`${url}/api/v1/findings`);
  assertError(r, 401, 'FORKWATCH_ERR_UNAUTHORIZED');
  assert.equal(r.headers.get('www-authenticate'), 'Bearer');
  assertError(await get(`${url}/api/v1/findings`, { authorization: 'Bearer wrong' }), 401, 'FORKWATCH_ERR_UNAUTHORIZED');
  // No route matched: nothing to authorize, and the 404 reveals nothing.
  assertError(await get(`${url}/api/v1/nothing-here`), 404, 'FORKWATCH_ERR_NOT_FOUND');
  assert.equal((await get(`${url}/api/v1/findings`, { authorization: 'Bearer s3cret' })).status, 200);
  for (const p of ['/metrics', '/healthz', '/readyz']) assert.equal((await get(`${url}${p}`)).status, 200, p);

  const locked = await start(t, { authToken: 's3cret', metrics, metricsAuth: true });
  for (const p of ['/metrics', '/healthz', '/readyz']) {
    assertError(await get(`${locked.url}${p}`), 401, 'FORKWATCH_ERR_UNAUTHORIZED');
    assert.equal((await get(`${locked.url}${p}`, { authorization: 'Bearer s3cret' })).status, 200, p);
  }
});
