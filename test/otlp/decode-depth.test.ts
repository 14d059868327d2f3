import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJson } from '../../src/otlp/decode-json.js';
import { DEFAULT_DECODE_LIMITS } from '../../src/otlp/decode-limits.js';
import { decodeProtobuf } from '../../src/otlp/decode-protobuf.js';
import { ATTR_SIDE, SPAN_SSE_EVENT } from '../../packages/instrumentation/src/semconv.js';
import { encodeOtlp } from './otlp-reflection.js';

const TRACE = 'ab'.repeat(16);

/** An AnyValue nested `levels` deep in kvlists. */
function nested(levels: number): Record<string, unknown> {
  let v: Record<string, unknown> = { stringValue: 'bottom' };
  for (let i = 0; i < levels; i++) v = { kvlistValue: { values: [{ key: `l${i}`, value: v }] } };
  return v;
}

function spans(hexIds: boolean): Array<Record<string, unknown>> {
  const id = (hex: string): unknown => (hexIds ? hex : Buffer.from(hex, 'hex'));
  const span = (n: number, extra: Array<Record<string, unknown>>): Record<string, unknown> => ({
    traceId: id(TRACE),
    spanId: id(String(n).padStart(16, '0')),
    name: SPAN_SSE_EVENT,
    startTimeUnixNano: '1764000000123456789',
    endTimeUnixNano: '1764000000124000000',
    attributes: [{ key: ATTR_SIDE, value: { stringValue: 'server' } }, ...extra],
  });
  return [span(1, []), span(2, [{ key: 'deep', value: nested(DEFAULT_DECODE_LIMITS.maxNestingDepth + 3) }]), span(3, [])];
}

const body = (hexIds: boolean): Record<string, unknown> => ({
  resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] }, scopeSpans: [{ scope: { name: 's' }, spans: spans(hexIds) }] }],
});

for (const [format, decode] of [
  ['protobuf', () => decodeProtobuf(encodeOtlp('ExportTraceServiceRequest', body(false)))],
  ['json', () => decodeJson(Buffer.from(JSON.stringify(body(true))))],
] as const) {
  test(`${format}: an attribute nested past maxNestingDepth rejects only its span; the others are kept`, () => {
    const r = decode();
    assert.equal(r.total, 3);
    assert.deepEqual(r.spans.map((s) => s.spanId), ['0000000000000001', '0000000000000003']);
    assert.equal(r.rejected, 1);
    assert.deepEqual(r.rejectReasons, { attribute_too_deep: 1 });
    assert.match(r.errorMessage ?? '', /1 forkwatch span rejected: attribute_too_deep=1/);
  });
}
