import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ForkwatchError } from '../../src/errors.js';
import { decodeJson } from '../../src/otlp/decode-json.js';
import { DEFAULT_DECODE_LIMITS } from '../../src/otlp/decode-limits.js';
import { decodeProtobuf } from '../../src/otlp/decode-protobuf.js';
import { ATTR_SIDE, SPAN_SSE_EVENT } from '../../packages/instrumentation/src/semconv.js';
import { encodeOtlp } from './otlp-reflection.js';
import { makeSdkSpans, mixedSpecs, serialize } from './sdk-spans.js';

const TRACE_HEX = '0af7651916cd43dd8448eb211c80319c';
const SPAN_HEX = 'b7ad6b7169203331';
const isDecodeError = (e: unknown) => e instanceof ForkwatchError && e.code === 'FORKWATCH_ERR_OTLP_DECODE';

function req(spans: unknown[], resource: unknown = { attributes: [{ key: 'service.name', value: { stringValue: 'svc-j' } }] }): string {
  return JSON.stringify({ resourceSpans: [{ resource, scopeSpans: [{ scope: { name: 's' }, spans }] }] });
}

function span(extra: Record<string, unknown> = {}, attrs: unknown[] = []): Record<string, unknown> {
  return {
    traceId: TRACE_HEX,
    spanId: SPAN_HEX,
    name: SPAN_SSE_EVENT,
    kind: 1,
    startTimeUnixNano: '1764000000123456789',
    endTimeUnixNano: 1764000000124000000,
    attributes: [{ key: ATTR_SIDE, value: { stringValue: 'client' } }, ...attrs],
    ...extra,
  };
}

test('a mixed SDK batch decodes the same from JSON (string and Buffer) and protobuf', () => {
  const { protobuf, json } = serialize(makeSdkSpans(mixedSpecs(200, 0.2)));
  const j = decodeJson(json);
  assert.deepEqual(decodeJson(Buffer.from(json)), j);
  assert.deepEqual(decodeProtobuf(protobuf), j);
  assert.equal(j.spans.length, 40);
  assert.equal(j.foreign, 160);
});

test('ids as hex (any case) or base64; times and int64 as strings or numbers', () => {
  const r = decodeJson(
    req([
      span({ traceId: TRACE_HEX.toUpperCase(), parentSpanId: Buffer.from('00f067aa0ba902b7', 'hex').toString('base64') }, [
        { key: 'i1', value: { intValue: '42' } },
        { key: 'i2', value: { intValue: 42 } },
        { key: 'i3', value: { intValue: '-9223372036854775808' } },
        { key: 'i4', value: { intValue: '9007199254740993' } },
        { key: 'd1', value: { doubleValue: '2.5' } },
        { key: 'd2', value: { doubleValue: 'NaN' } },
        { key: 'b', value: { boolValue: false } },
        { key: 'by', value: { bytesValue: 'AQID' } },
      ]),
      span({ traceId: Buffer.from(TRACE_HEX, 'hex').toString('base64'), spanId: Buffer.from(SPAN_HEX, 'hex').toString('base64') }),
    ]),
  );
  assert.equal(r.spans.length, 2);
  const [a, b] = r.spans as [(typeof r.spans)[0], (typeof r.spans)[0]];
  assert.equal(a.traceId, TRACE_HEX);
  assert.equal(a.parentSpanId, '00f067aa0ba902b7');
  assert.equal(b.traceId, TRACE_HEX);
  assert.equal(b.spanId, SPAN_HEX);
  assert.equal(a.service, 'svc-j');
  assert.ok(Math.abs(a.startMs - 1764000000123.4568) < 1e-3);
  assert.equal(a.endMs, 1764000000124);
  assert.deepEqual(
    { ...a.attributes, d2: String(a.attributes.d2) },
    { [ATTR_SIDE]: 'client', i1: 42, i2: 42, i3: '-9223372036854775808', i4: '9007199254740993', d1: 2.5, d2: 'NaN', b: false, by: 'AQID' },
  );
});

test('snake_case keys are accepted', () => {
  const text = JSON.stringify({
    resource_spans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { string_value: 'snake' } }] },
        scope_spans: [
          {
            spans: [
              {
                trace_id: TRACE_HEX,
                span_id: SPAN_HEX,
                parent_span_id: '',
                name: SPAN_SSE_EVENT,
                start_time_unix_nano: '1000000',
                end_time_unix_nano: '2000000',
                attributes: [
                  { key: ATTR_SIDE, value: { string_value: 'server' } },
                  { key: 'n', value: { int_value: '7' } },
                  { key: 'arr', value: { array_value: { values: [{ bool_value: true }, { kvlist_value: { values: [] } }] } } },
                ],
              },
            ],
          },
        ],
      },
    ],
  });
  const r = decodeJson(text);
  assert.deepEqual(r.spans[0], {
    traceId: TRACE_HEX,
    spanId: SPAN_HEX,
    parentSpanId: '',
    name: SPAN_SSE_EVENT,
    startMs: 1,
    endMs: 2,
    service: 'snake',
    attributes: { [ATTR_SIDE]: 'server', n: 7, arr: '[true,{}]' },
  });
});

test('rejections and foreign spans are counted; empty and missing parts are fine', () => {
  const r = decodeJson(
    req([
      span({ traceId: 'abc' }),
      span({ traceId: '00000000000000000000000000000000' }),
      span({ spanId: undefined }),
      span({ parentSpanId: '1234' }),
      span({ attributes: [{ key: ATTR_SIDE, value: { intValue: 1 } }] }),
      span(),
      { name: 'GET /', traceId: 'zz' },
      {},
    ], null),
  );
  assert.equal(r.total, 8);
  assert.equal(r.foreign, 2);
  assert.equal(r.spans.length, 1);
  assert.equal(r.spans[0]!.service, 'unknown_service');
  assert.deepEqual(r.rejectReasons, { invalid_trace_id: 2, invalid_span_id: 1, invalid_parent_span_id: 1, invalid_side: 1 });
  assert.deepEqual(decodeJson('{}'), { spans: [], total: 0, foreign: 0, rejected: 0, rejectReasons: {} });
  assert.equal(decodeJson('\ufeff{"resourceSpans":[{}]}').total, 0);
});

test('invalid JSON and wrong shapes are decode errors', () => {
  for (const bad of [
    '',
    '{"resourceSpans":',
    '[]',
    'null',
    '{"resourceSpans":{}}',
    '{"resourceSpans":[1]}',
    '{"resourceSpans":[{"scopeSpans":[{"spans":[7]}]}]}',
    req([span({ name: 5 })]),
    req([span({ startTimeUnixNano: 'soon' })]),
    req([span({}, [{ key: 'x', value: { intValue: '1.5' } }])]),
    req([span({}, [{ key: 'x', value: { intValue: '99999999999999999999' } }])]),
    req([span({}, [{ key: 'x', value: 'bare' }])]),
    req([span({}, [{ value: { stringValue: 'no key' } }])]),
    req([span({}, [{ key: 'x', value: { boolValue: 'yes' } }])]),
  ]) {
    assert.throws(() => decodeJson(bad), isDecodeError, bad.slice(0, 80));
  }
});

test('hostile values: huge string, 10k attributes, deep nesting (also 100k deep)', () => {
  const huge = 'x'.repeat(10 * 1024 * 1024);
  assert.equal(
    decodeJson(req([span({}, [{ key: 'h', value: { stringValue: huge } }])])).spans[0]!.attributes.h,
    'x'.repeat(DEFAULT_DECODE_LIMITS.maxAttributeValueLength),
  );
  const many = Array.from({ length: 10_000 }, (_, i) => ({ key: `k${i}`, value: { intValue: i } }));
  assert.equal(Object.keys(decodeJson(req([span({}, many)])).spans[0]!.attributes).length, DEFAULT_DECODE_LIMITS.maxAttributesPerSpan);

  const nest = (levels: number): string => {
    // Text-built so that 100k levels never go through a recursive serializer.
    return '{"arrayValue":{"values":['.repeat(levels - 1) + '{"stringValue":"leaf"}' + ']}}'.repeat(levels - 1);
  };
  const withValue = (v: string) =>
    `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${TRACE_HEX}","spanId":"${SPAN_HEX}","name":"${SPAN_SSE_EVENT}",` +
    `"attributes":[{"key":"${ATTR_SIDE}","value":{"stringValue":"client"}},{"key":"n","value":${v}}]}]}]}]}`;
  assert.equal(decodeJson(withValue(nest(8))).spans[0]!.attributes.n, '[[[[[[["leaf"]]]]]]]');
  // Past the limit the span is rejected, not the batch.
  assert.deepEqual(decodeJson(withValue(nest(9))).rejectReasons, { attribute_too_deep: 1 });
  // So deep that JSON.parse itself gives up: the body is undecodable (400), never a crash.
  let deepError: unknown;
  try {
    const r = decodeJson(withValue(nest(100_000)));
    assert.deepEqual(r.rejectReasons, { attribute_too_deep: 1 });
  } catch (e) {
    deepError = e;
  }
  assert.ok(deepError === undefined || isDecodeError(deepError), String(deepError));
});

test('protobuf and JSON agree on a hand-made payload with every AnyValue kind', () => {
  const attrs = [
    { key: ATTR_SIDE, value: { stringValue: 'server' } },
    { key: 's', value: { stringValue: 'é✓𝄞' } },
    { key: 'b', value: { boolValue: true } },
    { key: 'i', value: { intValue: '-12' } },
    { key: 'd', value: { doubleValue: 0.25 } },
    { key: 'a', value: { arrayValue: { values: [{ intValue: '1' }, { stringValue: 'two' }, {}] } } },
    { key: 'k', value: { kvlistValue: { values: [{ key: 'x', value: { doubleValue: 1.5 } }] } } },
    { key: 'y', value: { bytesValue: 'AAEC' } },
  ];
  const obj = {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'both' } }] },
        scopeSpans: [{ spans: [{ ...span(), attributes: attrs, startTimeUnixNano: '5000000', endTimeUnixNano: '6000000' }] }],
      },
    ],
  };
  const pbObj = structuredClone(obj) as typeof obj;
  const s0 = pbObj.resourceSpans[0]!.scopeSpans[0]!.spans[0]! as Record<string, unknown>;
  s0.traceId = Buffer.from(TRACE_HEX, 'hex');
  s0.spanId = Buffer.from(SPAN_HEX, 'hex');
  const pb = encodeOtlp('ExportTraceServiceRequest', pbObj);
  assert.deepEqual(decodeProtobuf(pb), decodeJson(JSON.stringify(obj)));
});
