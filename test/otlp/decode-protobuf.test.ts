import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ForkwatchError } from '../../src/errors.js';
import { decodeJson } from '../../src/otlp/decode-json.js';
import { DEFAULT_DECODE_LIMITS } from '../../src/otlp/decode-limits.js';
import { decodeProtobuf } from '../../src/otlp/decode-protobuf.js';
import {
  ATTR_SESSION_KEY,
  ATTR_SIDE,
  ATTR_SSE_EVENT_SEQ,
  SPAN_RESUME,
  SPAN_SSE_EVENT,
} from '../../packages/instrumentation/src/semconv.js';
import { encodeOtlp } from './otlp-reflection.js';
import { makeSdkSpans, mixedSpecs, serialize, sseEventAttributes } from './sdk-spans.js';

const TRACE = Buffer.from('0af7651916cd43dd8448eb211c80319c', 'hex');
const SPAN = Buffer.from('b7ad6b7169203331', 'hex');

const isDecodeError = (e: unknown) => e instanceof ForkwatchError && e.code === 'FORKWATCH_ERR_OTLP_DECODE';

/** A request with one resource and the given spans (plain objects for the reflection encoder). */
function request(spans: Array<Record<string, unknown>>, resourceAttrs: Array<Record<string, unknown>> | null = [
  { key: 'service.name', value: { stringValue: 'svc-a' } },
]): Uint8Array {
  return encodeOtlp('ExportTraceServiceRequest', {
    resourceSpans: [
      {
        ...(resourceAttrs ? { resource: { attributes: resourceAttrs } } : {}),
        scopeSpans: [{ scope: { name: 's' }, spans }],
      },
    ],
  });
}

function fwSpan(extra: Record<string, unknown> = {}, attrs: Array<Record<string, unknown>> = []): Record<string, unknown> {
  return {
    traceId: TRACE,
    spanId: SPAN,
    name: SPAN_SSE_EVENT,
    startTimeUnixNano: '1764000000123456789',
    endTimeUnixNano: '1764000000124000000',
    attributes: [{ key: ATTR_SIDE, value: { stringValue: 'server' } }, ...attrs],
    ...extra,
  };
}

test('SDK protobuf and JSON payloads decode to the same records', () => {
  const spans = makeSdkSpans([
    { name: SPAN_SSE_EVENT, attributes: { ...sseEventAttributes(7), big: 2 ** 60, neg: -7, arr: ['a', 'b'], d: 1.5 }, parent: true },
    { name: SPAN_RESUME, attributes: { [ATTR_SIDE]: 'client', [ATTR_SESSION_KEY]: 'k1' } },
    { name: 'GET /healthz', attributes: { 'http.route': '/healthz' } },
  ]);
  const { protobuf, json } = serialize(spans);
  const p = decodeProtobuf(protobuf);
  const j = decodeJson(json);
  assert.deepEqual(p, j);
  assert.equal(p.total, 4); // 2 forkwatch + 'GET /healthz' + the foreign 'parent'
  assert.equal(p.foreign, 2);
  assert.equal(p.rejected, 0);
  assert.equal(p.spans.length, 2);
  const ev = p.spans.find((s) => s.name === SPAN_SSE_EVENT)!;
  const sdkEv = spans.find((s) => s.name === SPAN_SSE_EVENT)!;
  assert.equal(ev.traceId, sdkEv.spanContext().traceId);
  assert.equal(ev.spanId, sdkEv.spanContext().spanId);
  assert.equal(ev.parentSpanId, sdkEv.parentSpanContext?.spanId);
  assert.match(ev.parentSpanId, /^[0-9a-f]{16}$/);
  assert.equal(ev.service, 'mcp-server');
  assert.ok(Math.abs(ev.startMs - 1_764_000_000_123.456) < 1e-3, String(ev.startMs));
  assert.ok(Math.abs(ev.endMs - ev.startMs - 1.5) < 1e-3);
  assert.equal(ev.attributes[ATTR_SSE_EVENT_SEQ], 7);
  assert.equal(ev.attributes.big, '1152921504606846976');
  assert.equal(ev.attributes.neg, -7);
  assert.equal(ev.attributes.arr, '["a","b"]');
  assert.equal(ev.attributes.d, 1.5);
  assert.equal(ev.attributes['forkwatch.sse.replayed'], false);
  const resume = p.spans.find((s) => s.name === SPAN_RESUME)!;
  assert.equal(resume.parentSpanId, '');
});

test('a large mixed batch: counts add up and foreign spans are skipped', () => {
  const { protobuf } = serialize(makeSdkSpans(mixedSpecs(500, 0.2)));
  const r = decodeProtobuf(protobuf);
  assert.equal(r.total, 500);
  assert.equal(r.spans.length, 100);
  assert.equal(r.foreign, 400);
  assert.ok(r.spans.every((s) => s.name.startsWith('forkwatch.')));
});

test('service.name defaults to unknown_service; resource after scope_spans still applies', () => {
  assert.equal(decodeProtobuf(request([fwSpan()], null)).spans[0]!.service, 'unknown_service');
  assert.equal(decodeProtobuf(request([fwSpan()], [{ key: 'host.name', value: { stringValue: 'h' } }])).spans[0]!.service, 'unknown_service');
  // Hand-order the fields: ResourceSpans{scope_spans=2 first, resource=1 after}.
  const normal = request([fwSpan()]);
  const r = decodeProtobuf(normal);
  assert.equal(r.spans[0]!.service, 'svc-a');
  const rsBody = encodeOtlp('ResourceSpans', { scopeSpans: [{ spans: [fwSpan()] }] });
  const resBody = encodeOtlp('ResourceSpans', { resource: { attributes: [{ key: 'service.name', value: { stringValue: 'late' } }] } });
  const inner = Buffer.concat([rsBody, resBody]);
  const outer = Buffer.concat([Buffer.from([0x0a]), varint(inner.length), inner]);
  assert.equal(decodeProtobuf(outer).spans[0]!.service, 'late');
});

test('forkwatch spans with bad ids or side are rejected and counted; the batch continues', () => {
  const r = decodeProtobuf(
    request([
      fwSpan({ traceId: TRACE.subarray(0, 15) }),
      fwSpan({ traceId: Buffer.alloc(16) }),
      fwSpan({ spanId: Buffer.alloc(9, 1) }),
      fwSpan({ parentSpanId: Buffer.alloc(3, 1) }),
      fwSpan({ attributes: [] }),
      fwSpan({ attributes: [{ key: ATTR_SIDE, value: { stringValue: 'proxy' } }] }),
      fwSpan(),
      { traceId: Buffer.alloc(3), name: 'foreign with junk ids' },
    ]),
  );
  assert.equal(r.total, 8);
  assert.equal(r.foreign, 1);
  assert.equal(r.rejected, 6);
  assert.equal(r.spans.length, 1);
  assert.deepEqual(r.rejectReasons, {
    invalid_trace_id: 2,
    invalid_span_id: 1,
    invalid_parent_span_id: 1,
    invalid_side: 2,
  });
  assert.match(r.errorMessage!, /^6 forkwatch spans rejected: .*invalid_side=2/);
});

test('int64 values: negative, beyond 2^53, at the edge', () => {
  const attrs = [
    { key: 'a', value: { intValue: '-5' } },
    { key: 'b', value: { intValue: '9007199254740991' } },
    { key: 'c', value: { intValue: '9007199254740993' } },
    { key: 'd', value: { intValue: '-9223372036854775808' } },
    { key: 'e', value: { intValue: '-9007199254740991' } },
    { key: 'f', value: { intValue: '0' } },
  ];
  const r = decodeProtobuf(request([fwSpan({}, attrs)]));
  const a = r.spans[0]!.attributes;
  assert.equal(a.a, -5);
  assert.equal(a.b, 9007199254740991);
  assert.equal(a.c, '9007199254740993');
  assert.equal(a.d, '-9223372036854775808');
  assert.equal(a.e, -9007199254740991);
  assert.equal(a.f, 0);
});

test('bytes, kvlist and empty values', () => {
  const attrs = [
    { key: 'bytes', value: { bytesValue: Buffer.from([1, 2, 3, 250]) } },
    {
      key: 'kv',
      value: { kvlistValue: { values: [{ key: 'x', value: { intValue: 1 } }, { key: '__proto__', value: { boolValue: true } }] } },
    },
    { key: 'empty', value: {} },
    { key: '__proto__', value: { stringValue: 'p' } },
  ];
  const a = decodeProtobuf(request([fwSpan({}, attrs)])).spans[0]!.attributes;
  assert.equal(a.bytes, Buffer.from([1, 2, 3, 250]).toString('base64'));
  assert.equal(a.kv, '{"x":1,"__proto__":true}');
  assert.equal('empty' in a, false);
  assert.equal(Object.getPrototypeOf(a), Object.prototype);
  assert.equal(Object.getOwnPropertyDescriptor(a, '__proto__')?.value, 'p');
});

test('truncation at every byte of a real payload is a decode error', () => {
  const { protobuf } = serialize(makeSdkSpans([{ name: SPAN_SSE_EVENT, attributes: sseEventAttributes(1) }, { name: 'x' }]));
  for (let cut = 1; cut < protobuf.length; cut++) {
    assert.throws(() => decodeProtobuf(protobuf.subarray(0, cut)), isDecodeError, `cut at ${cut}`);
  }
  assert.deepEqual(decodeProtobuf(new Uint8Array(0)), { spans: [], total: 0, foreign: 0, rejected: 0, rejectReasons: {} });
});

test('garbage is a decode error or a clean result, never another exception', () => {
  assert.throws(() => decodeProtobuf(Buffer.from('ffffffffffffffffffffff', 'hex')), isDecodeError);
  assert.throws(() => decodeProtobuf(Buffer.from('0b', 'hex')), isDecodeError); // wire type 3 (group)
  assert.throws(() => decodeProtobuf(Buffer.from('0800', 'hex')), isDecodeError); // resource_spans as varint
  assert.throws(() => decodeProtobuf(Buffer.from('{"resourceSpans":[]}')), isDecodeError);
  let seed = 42;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
  const base = request([fwSpan({}, [{ key: 'k', value: { stringValue: 'v' } }])]);
  for (let i = 0; i < 2000; i++) {
    const b = Buffer.from(base);
    for (let j = 0; j < 3; j++) b[rnd() % b.length] = rnd();
    try {
      const r = decodeProtobuf(b);
      assert.equal(r.total, r.spans.length + r.foreign + r.rejected);
    } catch (e) {
      assert.ok(isDecodeError(e), String(e));
    }
  }
});

test('hostile values: huge string cut without decoding it all, 10k attributes capped', () => {
  const huge = 'é'.repeat(5 * 1024 * 1024); // 10 MiB of UTF-8
  const hugeReq = request([fwSpan({}, [{ key: 'huge', value: { stringValue: huge } }])]);
  const t0 = performance.now();
  const a = decodeProtobuf(hugeReq).spans[0]!.attributes;
  const ms = performance.now() - t0;
  assert.equal(a.huge, 'é'.repeat(DEFAULT_DECODE_LIMITS.maxAttributeValueLength));
  // Decoding all 10 MiB would take tens of ms; the cut decodes ~3 KiB. Generous for a loaded CI box.
  assert.ok(ms < 250, `${ms} ms`);

  const many = Array.from({ length: 10_000 }, (_, i) => ({ key: `k${i}`, value: { intValue: i } }));
  const m = decodeProtobuf(request([fwSpan({}, many)])).spans[0]!.attributes;
  assert.equal(Object.keys(m).length, DEFAULT_DECODE_LIMITS.maxAttributesPerSpan);
  assert.equal(m[ATTR_SIDE], 'server');

  const longKey = decodeProtobuf(request([fwSpan({}, [{ key: 'k'.repeat(100_000), value: { boolValue: true } }])]));
  assert.ok(Object.keys(longKey.spans[0]!.attributes).every((k) => k.length <= DEFAULT_DECODE_LIMITS.maxAttributeKeyLength));

  const bigArray = { arrayValue: { values: Array.from({ length: 50_000 }, () => ({ stringValue: 'xxxxxxxxxx' })) } };
  const arr = decodeProtobuf(request([fwSpan({}, [{ key: 'arr', value: bigArray }])])).spans[0]!.attributes.arr as string;
  assert.equal(arr.length, DEFAULT_DECODE_LIMITS.maxAttributeValueLength);
  assert.ok(arr.startsWith('["xxxxxxxxxx",'));

  const cut = decodeProtobuf(request([fwSpan({}, [{ key: 's', value: { stringValue: 'abcdefgh' } }])]), { maxAttributeValueLength: 6 });
  assert.equal(cut.spans[0]!.attributes.s, 'abcdef');
});

test('nesting: within the limit decodes, beyond is a decode error, on foreign spans never looked at', () => {
  const nest = (levels: number): Record<string, unknown> => {
    let v: Record<string, unknown> = { stringValue: 'leaf' };
    for (let i = 1; i < levels; i++) v = { arrayValue: { values: [v] } };
    return v;
  };
  const ok = decodeProtobuf(request([fwSpan({}, [{ key: 'n', value: nest(8) }])]));
  assert.equal(ok.spans[0]!.attributes.n, '[[[[[[["leaf"]]]]]]]');
  // Past the limit the span is rejected, not the batch (the body is valid protobuf).
  const deep = decodeProtobuf(request([fwSpan({}, [{ key: 'n', value: nest(9) }])]));
  assert.deepEqual([deep.spans.length, deep.rejected, deep.rejectReasons], [0, 1, { attribute_too_deep: 1 }]);
  // 10,000 levels, built as raw bytes (protobufjs refuses to encode that deep).
  let any: Buffer = encodeOtlp('AnyValue', { stringValue: 'leaf' }) as Buffer;
  for (let i = 0; i < 10_000; i++) {
    const arr = Buffer.concat([Buffer.from([0x0a]), varint(any.length), any]); // ArrayValue{values=1}
    any = Buffer.concat([Buffer.from([0x2a]), varint(arr.length), arr]); // AnyValue{array_value=5}
  }
  const kv = Buffer.concat([Buffer.from([0x0a, 0x01, 0x6e, 0x12]), varint(any.length), any]);
  const spanBytes = Buffer.concat([
    encodeOtlp('Span', fwSpan()),
    Buffer.from([0x4a]),
    varint(kv.length),
    kv,
  ]);
  const ss = Buffer.concat([Buffer.from([0x12]), varint(spanBytes.length), spanBytes]);
  const rs = Buffer.concat([Buffer.from([0x12]), varint(ss.length), ss]);
  const req = Buffer.concat([Buffer.from([0x0a]), varint(rs.length), rs]);
  assert.deepEqual(decodeProtobuf(req).rejectReasons, { attribute_too_deep: 1 });
  const foreign = decodeProtobuf(request([{ ...fwSpan({}, [{ key: 'n', value: nest(20) }]), name: 'GET /' }]));
  assert.equal(foreign.foreign, 1);
});

test('a known field with the wrong wire type is a decode error naming where', () => {
  // Span{name=5} sent as a varint.
  const span = Buffer.from([0x28, 0x01]);
  const ss = Buffer.concat([Buffer.from([0x12]), varint(span.length), span]);
  const rs = Buffer.concat([Buffer.from([0x12]), varint(ss.length), ss]);
  const req = Buffer.concat([Buffer.from([0x0a]), varint(rs.length), rs]);
  assert.throws(
    () => decodeProtobuf(req),
    (e: unknown) => isDecodeError(e) && /resource_spans\[0\]\.scope_spans\[0\]\.spans\[0\]: name has wire type 0/.test((e as Error).message),
  );
});

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

test('spans sharing a trace id, in a run and apart, each get their own id right', () => {
  const other = Buffer.from('1bf7651916cd43dd8448eb211c80319d', 'hex');
  // Differs from TRACE in the last byte only: a reused id must compare all 16 bytes.
  const near = Buffer.from(TRACE);
  near[15] = near[15]! ^ 1;
  const traces = [TRACE, TRACE, other, TRACE, near, near];
  const r = decodeProtobuf(request(traces.map((traceId) => fwSpan({ traceId }))));
  assert.deepEqual(
    r.spans.map((s) => s.traceId),
    traces.map((t) => t.toString('hex')),
  );
});
