/**
 * AttributeShapes builds a span's attribute record from a generated literal once its key
 * sequence was seen often enough, and property by property otherwise. Both must give the same
 * record: same keys in the same order, same values, plain objects. These tests push each case
 * past the point where a shape gets its factory and compare with the record built by hand, and
 * decode a batch both ways (protobuf, where shapes apply, and JSON, where they do not).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { AttrValue } from '../../src/model/span-record.js';
import { AttributeShapes, SCHEMA_ATTRIBUTE_KEYS, schemaKeyIndex } from '../../src/otlp/attribute-shapes.js';
import { decodeJson } from '../../src/otlp/decode-json.js';
import { decodeProtobuf } from '../../src/otlp/decode-protobuf.js';
import {
  ATTR_JSONRPC_KIND,
  ATTR_REQUEST_DURATION_MS,
  ATTR_SESSION_KEY,
  ATTR_SIDE,
  ATTR_SSE_EVENT_SEQ,
  ATTR_SSE_REPLAYED,
  SPAN_REQUEST_SETTLED,
  SPAN_SSE_EVENT,
} from '../../packages/instrumentation/src/semconv.js';
import { makeSdkSpans, serialize, sseEventAttributes } from './sdk-spans.js';

/** What a plain property-by-property build gives (last value wins, first place kept). */
function byHand(pairs: Array<[string, AttrValue]>): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const [k, v] of pairs) {
    if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out;
}

function build(shapes: AttributeShapes, pairs: Array<[string, AttrValue]>): Record<string, AttrValue> {
  shapes.begin();
  for (const [k, v] of pairs) shapes.add(k, schemaKeyIndex(k), v);
  return shapes.build();
}

function assertSame(got: Record<string, AttrValue>, want: Record<string, AttrValue>): void {
  assert.deepEqual(Object.keys(got), Object.keys(want));
  assert.deepEqual(got, want);
  assert.equal(Object.getPrototypeOf(got), Object.prototype);
}

test('schema keys: every ATTR_ of semconv, each with its index', () => {
  assert.ok(SCHEMA_ATTRIBUTE_KEYS.includes(ATTR_SIDE));
  assert.ok(SCHEMA_ATTRIBUTE_KEYS.length > 40 && SCHEMA_ATTRIBUTE_KEYS.length <= 126);
  assert.equal(new Set(SCHEMA_ATTRIBUTE_KEYS).size, SCHEMA_ATTRIBUTE_KEYS.length);
  for (const [i, k] of SCHEMA_ATTRIBUTE_KEYS.entries()) assert.equal(schemaKeyIndex(k), i);
  assert.equal(schemaKeyIndex('url.path'), -1);
  assert.equal(schemaKeyIndex('__proto__'), -1);
});

test('a repeated shape: the same records before and after it gets its factory, each a fresh object', () => {
  const shapes = new AttributeShapes();
  const made: Array<Record<string, AttrValue>> = [];
  for (let i = 0; i < 40; i++) {
    const pairs = Object.entries(sseEventAttributes(i)) as Array<[string, AttrValue]>;
    const got = build(shapes, pairs);
    assertSame(got, byHand(pairs));
    made.push(got);
  }
  assert.notEqual(made[38], made[39]);
  assert.equal(made[10]![ATTR_SSE_EVENT_SEQ], 10, 'an earlier record keeps its values');
});

test('shapes outside the schema, with a key twice, or __proto__: built property by property, alike', () => {
  const shapes = new AttributeShapes();
  const cases: Array<Array<[string, AttrValue]>> = [
    [[ATTR_SIDE, 'server'], ['url.path', '/mcp'], [ATTR_SESSION_KEY, 'k']],
    [[ATTR_SIDE, 'server'], [ATTR_SESSION_KEY, 'k1'], [ATTR_SIDE, 'client']],
    [[ATTR_SIDE, 'server'], ['__proto__', 'x'], [ATTR_JSONRPC_KIND, 'response']],
    [],
    // A prefix of a longer shape, and the longer one: distinct shapes.
    [[ATTR_SIDE, 'server']],
    [[ATTR_SIDE, 'server'], [ATTR_SSE_REPLAYED, true], [ATTR_REQUEST_DURATION_MS, 1.5]],
    [[ATTR_SSE_REPLAYED, false], [ATTR_SIDE, 'client']],
  ];
  for (let round = 0; round < 20; round++) {
    for (const pairs of cases) {
      const got = build(shapes, pairs);
      assertSame(got, byHand(pairs));
    }
  }
  const proto = build(shapes, cases[2]!);
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.ok(Object.hasOwn(proto, '__proto__'));
});

test('decodeProtobuf past the factories equals decodeJson span by span, keys in the same order', () => {
  const specs = [];
  for (let i = 0; i < 60; i++) {
    specs.push({ name: SPAN_SSE_EVENT, attributes: sseEventAttributes(i, i % 2 === 0 ? 'server' : 'client') });
    if (i % 3 === 0) specs.push({ name: SPAN_REQUEST_SETTLED, attributes: { [ATTR_SIDE]: 'client', [ATTR_SESSION_KEY]: 'a3f1c2d4e5b6a7980112233445566778', 'custom.key': i, [ATTR_REQUEST_DURATION_MS]: 2.5 } });
  }
  const { protobuf, json } = serialize(makeSdkSpans(specs));
  // Twice: the second decode runs on the shapes (and factories) the first one taught.
  for (let round = 0; round < 2; round++) {
    const p = decodeProtobuf(protobuf);
    const j = decodeJson(json);
    assert.equal(p.spans.length, specs.length);
    assert.deepEqual(p, j);
    for (let i = 0; i < p.spans.length; i++) assert.deepEqual(Object.keys(p.spans[i]!.attributes), Object.keys(j.spans[i]!.attributes));
  }
});

test('where code generation is disallowed, every record is built property by property, alike', () => {
  const mod = new URL('../../src/otlp/attribute-shapes.ts', import.meta.url).href;
  const code = `
    const { AttributeShapes, schemaKeyIndex } = await import(${JSON.stringify(mod)});
    const s = new AttributeShapes();
    const out = [];
    for (let i = 0; i < 20; i++) {
      s.begin();
      for (const [k, v] of [['forkwatch.side', 'server'], ['forkwatch.session.key', 'k' + i], ['forkwatch.sse.event.seq', i]]) s.add(k, schemaKeyIndex(k), v);
      out.push(s.build());
    }
    console.log(JSON.stringify(out[19]));
  `;
  const r = spawnSync(process.execPath, ['--disallow-code-generation-from-strings', '--conditions=forkwatch-source', '--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), JSON.stringify({ 'forkwatch.side': 'server', 'forkwatch.session.key': 'k19', 'forkwatch.sse.event.seq': 19 }));
});
