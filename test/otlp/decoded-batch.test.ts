/**
 * The protobuf decoder writes forkwatch spans as rows of a SpanBatch (what the engine takes) and
 * makes records only when `spans` is read. The rows must say exactly what the records say: the
 * same spans, attributes in the same order, the same values; a rejected span leaves nothing in
 * the batch; JSON's records give the same rows; and the engine's view of a row holds each schema
 * attribute the record holds, nothing of the row before.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpanView } from '../../src/correlate/span-view.js';
import { SCHEMA_ATTRIBUTE_KEYS } from '../../src/model/schema-keys.js';
import { SpanBatch } from '../../src/model/span-batch.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { decodeJson } from '../../src/otlp/decode-json.js';
import { decodeProtobuf } from '../../src/otlp/decode-protobuf.js';
import { batchOf } from '../../src/otlp/decoded-batch.js';
import { spanRecordsOf } from '../../src/otlp/span-records-of.js';
import { ATTR_JSONRPC_KIND, ATTR_SESSION_KEY, ATTR_SIDE, SPAN_REQUEST_SETTLED, SPAN_RESUME, SPAN_SSE_EVENT } from '../../packages/instrumentation/src/semconv.js';
import { encodeOtlp } from './otlp-reflection.js';
import { makeSdkSpans, mixedSpecs, serialize, sseEventAttributes } from './sdk-spans.js';

const TRACE = Buffer.from('0af7651916cd43dd8448eb211c80319c', 'hex');

/** Every column of the batch, row by row. */
function rows(b: SpanBatch): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < b.length; i++) {
    const attrs: unknown[] = [];
    for (let j = b.attrStart[i]!; j < b.attrStart[i + 1]!; j++) attrs.push([b.keyAt(j), b.keyCode[j]! >= 0 ? b.keyCode[j] : -1, b.values[j]]);
    out.push([b.traceId[i], b.spanId[i], b.parentSpanId[i], b.name[i], b.startMs[i], b.endMs[i], b.service[i], b.side[i], attrs]);
  }
  return out;
}

/** What the engine reads of a record: each schema key's value, undefined when absent. */
function schemaValues(r: SpanRecord): unknown[] {
  return SCHEMA_ATTRIBUTE_KEYS.map((k) => (Object.hasOwn(r.attributes, k) ? r.attributes[k] : undefined));
}

test('SDK batches: the protobuf rows equal the rows of the JSON records, and make the same records', () => {
  const specs = [
    ...mixedSpecs(200, 0.5),
    { name: SPAN_SSE_EVENT, attributes: { ...sseEventAttributes(7, 'client'), big: 2 ** 60, arr: ['a', 'b'], d: 1.5 }, parent: true },
    { name: SPAN_RESUME, attributes: { [ATTR_SIDE]: 'client', [ATTR_SESSION_KEY]: 'k1' } },
  ];
  const { protobuf, json } = serialize(makeSdkSpans(specs));
  const p = decodeProtobuf(protobuf);
  const j = decodeJson(json);
  const pb = batchOf(p);
  assert.equal(pb.length, 102);
  assert.deepEqual(rows(pb), rows(batchOf(j)));
  assert.equal(batchOf(p), pb, 'the decoder hands its own rows, once');
  assert.deepEqual(spanRecordsOf(pb), j.spans);
  assert.deepEqual(p, j);
  const view = new SpanView();
  for (let i = 0; i < pb.length; i++) {
    view.load(pb, i);
    assert.deepEqual(SCHEMA_ATTRIBUTE_KEYS.map((_, k) => view.get(k)), schemaValues(j.spans[i]!), `row ${i}`);
    assert.deepEqual([view.traceId, view.spanId, view.name, view.startMs, view.service], [j.spans[i]!.traceId, j.spans[i]!.spanId, j.spans[i]!.name, j.spans[i]!.startMs, j.spans[i]!.service]);
  }
});

test('a rejected span leaves no attribute in the batch: the rows around it keep their own', () => {
  const span = (id: number, attrs: Array<Record<string, unknown>>): Record<string, unknown> => ({
    traceId: TRACE,
    spanId: Buffer.from(`00000000000000${id.toString(16).padStart(2, '0')}`, 'hex'),
    name: SPAN_REQUEST_SETTLED,
    startTimeUnixNano: '1764000000123456789',
    endTimeUnixNano: '1764000000124000000',
    attributes: attrs,
  });
  let deep: Record<string, unknown> = { stringValue: 'leaf' };
  for (let i = 0; i < 40; i++) deep = { arrayValue: { values: [deep] } };
  const side = (v: string) => ({ key: ATTR_SIDE, value: { stringValue: v } });
  const kind = (v: string) => ({ key: ATTR_JSONRPC_KIND, value: { stringValue: v } });
  const body = encodeOtlp('ExportTraceServiceRequest', {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
        scopeSpans: [
          {
            spans: [
              span(1, [side('server'), kind('one')]),
              span(2, [side('server'), kind('deep'), { key: 'x', value: { stringValue: 'y' } }, { key: 'n', value: deep }]),
              span(6, [side('server'), { key: 'x', value: { stringValue: 'y' } }, kind('bad side'), side('observer')]),
              span(3, [kind('no side')]),
              span(4, [side('proxy'), kind('bad side')]),
              span(5, [kind('five'), side('client'), side('server')]),
            ],
          },
        ],
      },
    ],
  });
  const r = decodeProtobuf(body);
  assert.deepEqual([r.rejected, r.rejectReasons], [4, { attribute_too_deep: 1, invalid_side: 3 }]);
  const b = batchOf(r);
  assert.deepEqual(b.spanId, ['0000000000000001', '0000000000000005']);
  assert.deepEqual(b.side, ['server', 'server'], 'the last of a repeated key, as in the record');
  assert.deepEqual(b.keyCode.map((_, j) => b.keyAt(j)), [ATTR_SIDE, ATTR_JSONRPC_KIND, ATTR_JSONRPC_KIND, ATTR_SIDE, ATTR_SIDE]);
  assert.deepEqual(b.extraKeys, [], 'the rejected span\'s key outside the schema is gone too');
  assert.deepEqual(r.spans.map((s) => s.attributes), [
    { [ATTR_SIDE]: 'server', [ATTR_JSONRPC_KIND]: 'one' },
    { [ATTR_JSONRPC_KIND]: 'five', [ATTR_SIDE]: 'server' },
  ]);
  const view = new SpanView();
  const KIND = SCHEMA_ATTRIBUTE_KEYS.indexOf(ATTR_JSONRPC_KIND);
  assert.equal(view.load(b, 0).get(KIND), 'one');
  assert.equal(view.load(b, 1).get(KIND), 'five');
});

test('rows built from records: malformed ones are left out, slices keep their rows whole', () => {
  const rec = (i: number, attributes: SpanRecord['attributes']): SpanRecord => ({ traceId: 'a'.repeat(32), spanId: i.toString(16).padStart(16, '0'), parentSpanId: '', name: SPAN_SSE_EVENT, startMs: i, endMs: i + 1, service: 's', attributes });
  const b = SpanBatch.of([rec(1, { [ATTR_SIDE]: 'server', x: 1 }), null as never, rec(2, { [ATTR_SESSION_KEY]: 'k' }), rec(3, { [ATTR_SIDE]: 'client' })]);
  assert.equal(b.length, 3);
  assert.deepEqual(b.side, ['server', undefined, 'client']);
  const s = b.slice(1, 3);
  assert.deepEqual(rows(s), rows(b).slice(1));
  const view = new SpanView();
  const KEY = SCHEMA_ATTRIBUTE_KEYS.indexOf(ATTR_SESSION_KEY);
  const SIDE = SCHEMA_ATTRIBUTE_KEYS.indexOf(ATTR_SIDE);
  assert.deepEqual([view.load(b, 1).get(KEY), view.get(SIDE)], ['k', undefined]);
  assert.deepEqual([view.load(b, 2).get(KEY), view.get(SIDE)], [undefined, 'client'], 'nothing of the row before');
});
