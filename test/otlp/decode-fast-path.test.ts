/**
 * The protobuf decoder reads the KeyValue layout every SDK writes (key, then value, one-byte
 * lengths, a lone string value) without its general field walk. These tests build the same
 * attribute both ways, the canonical bytes and equivalent encodings that the fast path must hand
 * to the walk (fields swapped, padded varints, trailing fields), and check both decode alike,
 * that every malformed variant is still a decode error, and the parent span id reuse.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ForkwatchError } from '../../src/errors.js';
import { decodeProtobuf } from '../../src/otlp/decode-protobuf.js';
import type { DecodeResult } from '../../src/otlp/decode-result.js';
import { ATTR_SESSION_KEY, ATTR_SIDE, SPAN_SSE_EVENT } from '../../packages/instrumentation/src/semconv.js';

const isDecodeError = (e: unknown) => e instanceof ForkwatchError && e.code === 'FORKWATCH_ERR_OTLP_DECODE';

function varint(n: number, pad = 0): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0 || pad > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  // Padding: a longer varint of the same value (valid protobuf, not what encoders write).
  for (let i = 0; i < pad; i++) out.push(i === pad - 1 ? 0 : 0x80);
  return out;
}
const utf8 = (s: string): number[] => [...Buffer.from(s, 'utf8')];
/** A length-delimited field. */
const ld = (field: number, body: number[], pad = 0): number[] => [(field << 3) | 2, ...varint(body.length, pad), ...body];

// AnyValue bodies.
const strV = (s: string): number[] => ld(1, utf8(s));
const boolV = (b: boolean): number[] => [0x10, b ? 1 : 0];
const intV = (n: number): number[] => [0x18, ...varint(n)];
const doubleV = (d: number): number[] => {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(d);
  return [0x21, ...b];
};

/** KeyValue bodies: the canonical one and equivalents that must decode alike. */
const kv = (key: string, value: number[]): number[] => [...ld(1, utf8(key)), ...ld(2, value)];
const kvSwapped = (key: string, value: number[]): number[] => [...ld(2, value), ...ld(1, utf8(key))];
const kvPadded = (key: string, value: number[]): number[] => [...ld(1, utf8(key), 1), ...ld(2, value, 1)];

const TRACE = [...Buffer.from('0af7651916cd43dd8448eb211c80319c', 'hex')];
const SPAN = [...Buffer.from('b7ad6b7169203331', 'hex')];

/** A request: one resource (service.name), one scope, spans given as their attribute KeyValue bodies. */
function request(spans: Array<{ attrs: number[][]; parent?: number[] }>): Uint8Array {
  const spanBodies = spans.map(({ attrs, parent }) => [
    ...ld(1, TRACE),
    ...ld(2, SPAN),
    ...(parent ? ld(4, parent) : []),
    ...ld(5, utf8(SPAN_SSE_EVENT)),
    ...attrs.flatMap((a) => ld(9, a)),
  ]);
  const resource = ld(1, ld(1, kv('service.name', strV('svc'))));
  const scopeSpans = ld(2, spanBodies.flatMap((b) => ld(2, b)));
  return Uint8Array.from(ld(1, [...resource, ...scopeSpans]));
}

const SIDE = kv(ATTR_SIDE, strV('server'));
const attrsOf = (r: DecodeResult): Array<Record<string, unknown>> => r.spans.map((s) => s.attributes);

test('canonical KeyValues and equivalent encodings decode alike, for every kind of value', () => {
  const long = 'v'.repeat(200); // a two-byte length: not the one-byte fast path
  const values: Array<[string, number[]]> = [
    ['s', strV('short')],
    ['empty string', strV('')],
    ['utf8', strV('é✓ \u{1F600}')],
    ['long', strV(long)],
    ['bool', boolV(true)],
    ['false', boolV(false)],
    ['int', intV(300)],
    ['double', doubleV(1.5)],
    ['bytes', ld(7, [1, 2, 3])],
    ['array', ld(5, [...ld(1, strV('a')), ...ld(1, intV(2))])],
    ['kvlist', ld(6, ld(1, kv('x', boolV(false))))],
    // oneof: the last field wins, so a string followed by a bool is the bool.
    ['string then bool', [...strV('lost'), ...boolV(true)]],
    [ATTR_SESSION_KEY, strV('0123456789abcdef0123456789abcdef')],
    ['k'.repeat(64), strV('key of 64 bytes')],
    ['k'.repeat(65), strV('key of 65 bytes')],
  ];
  const canonical = decodeProtobuf(request([{ attrs: [SIDE, ...values.map(([k, v]) => kv(k, v))] }]));
  const swapped = decodeProtobuf(request([{ attrs: [SIDE, ...values.map(([k, v]) => kvSwapped(k, v))] }]));
  const padded = decodeProtobuf(request([{ attrs: [SIDE, ...values.map(([k, v]) => kvPadded(k, v))] }]));
  assert.deepEqual(attrsOf(swapped), attrsOf(canonical));
  assert.deepEqual(attrsOf(padded), attrsOf(canonical));
  const a = canonical.spans[0]!.attributes;
  assert.equal(a.s, 'short');
  assert.equal(a['empty string'], '');
  assert.equal(a.utf8, 'é✓ \u{1F600}');
  assert.equal(a.long, long);
  assert.equal(a.bool, true);
  assert.equal(a.false, false);
  assert.equal(a.int, 300);
  assert.equal(a.double, 1.5);
  assert.equal(a.bytes, 'AQID');
  assert.equal(a.array, '["a",2]');
  assert.equal(a.kvlist, '{"x":false}');
  assert.equal(a['string then bool'], true);
  assert.equal(a[ATTR_SESSION_KEY], '0123456789abcdef0123456789abcdef');
  assert.equal(a['k'.repeat(64)], 'key of 64 bytes');
  assert.equal(a['k'.repeat(65)], 'key of 65 bytes');
  assert.equal(Object.keys(a).length, values.length + 1);
});

test('the fast path keeps the limits: keys and values cut, a __proto__ key an own property', () => {
  // 14 and 6 keep forkwatch.side: server whole, so the span is accepted.
  const attrs = [SIDE, kv('abcdefghijklmnopqrst', strV('0123456789')), kv('__proto__', strV('p'))];
  const r = decodeProtobuf(request([{ attrs }]), { maxAttributeKeyLength: 14, maxAttributeValueLength: 6 });
  const a = r.spans[0]!.attributes;
  assert.deepEqual(Object.keys(a), [ATTR_SIDE, 'abcdefghijklmn', '__proto__']);
  assert.equal(a.abcdefghijklmn, '012345');
  assert.equal(Object.getPrototypeOf(a), Object.prototype);
  assert.ok(Object.hasOwn(a, '__proto__'));
  // One unit shorter and forkwatch.side is cut to another key: the span has no side.
  const cut = decodeProtobuf(request([{ attrs }]), { maxAttributeKeyLength: 13 });
  assert.deepEqual(cut.rejectReasons, { invalid_side: 1 });
});

test('an empty or key-less KeyValue sets nothing; a value-less one neither', () => {
  const r = decodeProtobuf(request([{ attrs: [SIDE, [], ld(2, strV('no key')), ld(1, utf8('no value')), kv('ok', strV('yes'))] }]));
  assert.deepEqual(r.spans[0]!.attributes, { [ATTR_SIDE]: 'server', ok: 'yes' });
});

test('malformed KeyValues are decode errors whichever path meets them', () => {
  const good = kv('key', strV('value'));
  const bad: Array<[string, number[]]> = [
    ['key length past the KeyValue', [0x0a, 0x7f, ...utf8('key')]],
    ['value length past the KeyValue', [...ld(1, utf8('key')), 0x12, 0x7f, ...strV('v')]],
    ['string length past the value', [...ld(1, utf8('key')), ...ld(2, [0x0a, 0x09, ...utf8('ab')])]],
    ['truncated varint in the key length', [0x0a, 0x80]],
    ['truncated varint in the value', [...ld(1, utf8('key')), ...ld(2, [0x18, 0x80])]],
    ['key with the wrong wire type', [0x08, 0x01, ...ld(2, strV('v'))]],
    ['value with the wrong wire type', [...ld(1, utf8('key')), 0x10, 0x01]],
    ['string value with the wrong wire type', [...ld(1, utf8('key')), ...ld(2, [0x08, 0x01])]],
    ['unsupported wire type', [...ld(1, utf8('key')), 0x13]],
  ];
  for (const [what, body] of bad) {
    // Last attribute of the span, and followed by a good one: a length must not run into the next.
    assert.throws(() => decodeProtobuf(request([{ attrs: [SIDE, body] }])), isDecodeError, what);
    assert.throws(() => decodeProtobuf(request([{ attrs: [SIDE, body, good] }])), isDecodeError, `${what}, then a good one`);
  }
});

test('truncation at every byte of canonical attributes is a decode error, never another exception', () => {
  const body = request([{ attrs: [SIDE, kv('k', strV('v')), kv('b', boolV(true)), kv('i', intV(5)), kv(ATTR_SESSION_KEY, strV('abc'))] }]);
  for (let n = 1; n < body.length; n++) {
    try {
      decodeProtobuf(body.subarray(0, n));
    } catch (err) {
      assert.ok(isDecodeError(err), `cut at ${n}: ${String(err)}`);
    }
  }
});

test('deep nesting reached through a canonical KeyValue rejects the span only', () => {
  let v = strV('leaf');
  for (let i = 0; i < 12; i++) v = ld(5, ld(1, v));
  const r = decodeProtobuf(request([{ attrs: [SIDE, kv('deep', v)] }, { attrs: [SIDE, kv('ok', strV('yes'))] }]));
  assert.equal(r.rejected, 1);
  assert.deepEqual(r.rejectReasons, { attribute_too_deep: 1 });
  assert.equal(r.spans.length, 1);
  assert.equal(r.spans[0]!.attributes.ok, 'yes');
});

test('parent span ids: runs share one, neighbours that differ in any byte get their own', () => {
  const a = [1, 2, 3, 4, 5, 6, 7, 8];
  const lastByte = [1, 2, 3, 4, 5, 6, 7, 9];
  const firstByte = [0, 2, 3, 4, 5, 6, 7, 8];
  const parents = [a, a, lastByte, a, firstByte, undefined, a];
  const r = decodeProtobuf(request(parents.map((parent) => ({ attrs: [SIDE], ...(parent ? { parent } : {}) }))));
  assert.deepEqual(
    r.spans.map((s) => s.parentSpanId),
    parents.map((p) => (p ? Buffer.from(p).toString('hex') : '')),
  );
});
