import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as sc from '@forkwatch/instrumentation/semconv';
import { ByteWriter } from '../../src/correlate/byte-writer.js';
import { buildLineage } from '../../src/correlate/build-lineage.js';
import { decodeBinarySession, encodeBinarySession } from '../../src/correlate/codec/binary-session.js';
import { deserializeSession, serializeSession } from '../../src/correlate/codec/json-session.js';
import { newSessionState, type SessionState } from '../../src/correlate/session-state.js';
import { recordSpan } from '../../src/correlate/record-span.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { DEFAULT_ENGINE_OPTIONS } from '../../src/correlate/engine-options.js';
import { harness } from './harness.js';

const KEY = 'ab'.repeat(16);
let n = 0;
function span(side: 'client' | 'server', name: string, attrs: Record<string, string | number | boolean>, observer?: string): SpanRecord {
  n++;
  return {
    traceId: n.toString(16).padStart(32, '0'),
    spanId: n.toString(16).padStart(16, '0'),
    parentSpanId: '',
    name,
    startMs: 1_900_000_000_000 + n,
    endMs: 1_900_000_000_000 + n,
    service: side === 'server' ? 'svc' : 'app',
    attributes: { [sc.ATTR_SIDE]: side, [sc.ATTR_SESSION_KEY]: KEY, ...attrs, ...(observer ? { [sc.ATTR_OBSERVER]: observer } : {}) },
  };
}
const created = (observer?: string) => span('server', sc.SPAN_SESSION_CREATED, { [sc.ATTR_SESSION_INCARNATION]: 'i1', [sc.ATTR_SESSION_CREATED_BY]: 'initialize' }, observer);
const event = (side: 'client' | 'server', id: string, observer?: string) =>
  span(side, sc.SPAN_SSE_EVENT, { [sc.ATTR_SESSION_INCARNATION]: 'i1', [sc.ATTR_SSE_EVENT_ID]: id, [sc.ATTR_SSE_EVENT_SEQ]: Number(id.slice(1)) }, observer);

test('a session seen through a proxy: its server refs in the lineage name the observer, client refs do not', () => {
  const h = harness();
  h.ingest([created(sc.OBSERVER_PROXY), event('server', 'e1', sc.OBSERVER_PROXY), event('client', 'e1')]);
  const l = h.engine.lineage(KEY)!;
  assert.equal(l.incarnations[0]!.created?.observer, 'proxy');
  assert.deepEqual(l.events.map((e) => [e.side, e.observer]), [['server', 'proxy'], ['client', undefined]]);
});

test('server spans of the server itself, or mixed with a proxy\'s, name no observer', () => {
  for (const spans of [[created(), event('server', 'e1')], [created(), event('server', 'e1', sc.OBSERVER_PROXY)], [created(sc.OBSERVER_PROXY), event('server', 'e1')]]) {
    const h = harness();
    h.ingest(spans);
    assert.deepEqual(h.engine.lineage(KEY)!.events.map((e) => e.observer), [undefined]);
  }
});

test('the observer survives both state codecs (a restart keeps the lane)', () => {
  const s: SessionState = newSessionState(KEY, false, 1_900_000_000_000);
  const res = { kept: false, eventsAdded: 0, requestsDropped: 0, pendingRequestsDelta: 0, eventsDropped: 0, settledRequestId: undefined };
  for (const sp of [created(sc.OBSERVER_PROXY), event('server', 'e1', sc.OBSERVER_PROXY)]) recordSpan(s, sp, 'server', 1_900_000_000_100, DEFAULT_ENGINE_OPTIONS, res as never);
  assert.equal(s.serverObserver, 'proxy');
  const bin = decodeBinarySession(encodeBinarySession(new ByteWriter(), s).slice());
  assert.equal(bin.serverObserver, 'proxy');
  assert.equal(buildLineage(bin).events[0]!.observer, 'proxy');
  assert.equal((deserializeSession(serializeSession(s)) as SessionState).serverObserver, 'proxy');
});


test('an observer name past 64 characters is kept cut to 64 on every span, not dropped by the second', () => {
  const long = `proxy-${'x'.repeat(100)}`;
  const h = harness();
  h.ingest([created(long), event('server', 'e1', long)]);
  assert.deepEqual(h.engine.lineage(KEY)!.events.map((e) => e.observer), [long.slice(0, 64)]);
});
