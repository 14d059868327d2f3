import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createOtlpServer } from '../../src/http/otlp-server.js';
import { makeSdkSpans, serialize, sseEventAttributes } from '../otlp/sdk-spans.js';
import { SPAN_SSE_EVENT } from '../../packages/instrumentation/src/semconv.js';

test('a sink refusing for storage: 503 + Retry-After whose message names the storage error, not a full queue', async (t) => {
  const app = await createOtlpServer({ sink: { offer: () => ({ storage: 'SQLITE_FULL: database or disk is full' }) } });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());
  const { json } = serialize(makeSdkSpans([{ name: SPAN_SSE_EVENT, attributes: sseEventAttributes(1) }]));
  const res = await fetch(`${url}/v1/traces`, { method: 'POST', body: json, headers: { 'content-type': 'application/json' } });
  assert.equal(res.status, 503);
  assert.equal(res.headers.get('retry-after'), '2');
  const body = JSON.parse(await res.text());
  assert.equal(body.error, 'FORKWATCH_ERR_STORAGE_UNAVAILABLE');
  assert.match(body.message, /storage failing \(SQLITE_FULL/);
  assert.doesNotMatch(body.message, /queue full/);
});

test('/readyz says why it is not ready', async (t) => {
  const { createApiServer } = await import('../../src/http/api-server.js');
  const { openStore } = await import('../../src/storage/open-store.js');
  const store = openStore({ path: ':memory:' });
  const api = await createApiServer({ store, lineage: () => undefined, ready: () => false, notReadyReason: () => 'storage: SQLITE_FULL' });
  const url = await api.listen({ host: '127.0.0.1', port: 0 });
  t.after(async () => {
    await api.close();
    store.close();
  });
  const res = await fetch(`${url}/readyz`);
  assert.equal(res.status, 503);
  assert.deepEqual(await res.json(), { status: 'not_ready', reason: 'storage: SQLITE_FULL' });
});
