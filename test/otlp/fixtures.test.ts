import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { decodeJson } from '../../src/otlp/decode-json.js';
import { decodeProtobuf } from '../../src/otlp/decode-protobuf.js';

// Captured once from the SDK 2.12 serializers (see test/otlp/sdk-spans.ts): a golden check that
// does not move when the SDK does.
const dir = new URL('../fixtures/otlp/', import.meta.url);
const pb = readFileSync(new URL('mixed-batch.binpb', dir));
const json = readFileSync(new URL('mixed-batch.json', dir), 'utf8');
const expected = JSON.parse(readFileSync(new URL('mixed-batch.expected.json', dir), 'utf8'));

test('captured protobuf and JSON batches decode to the recorded result', () => {
  assert.deepEqual(decodeProtobuf(pb), expected);
  assert.deepEqual(decodeJson(json), expected);
  assert.equal(expected.total, 12);
  assert.equal(expected.spans.length, 3);
  assert.deepEqual(expected.rejectReasons, { invalid_side: 1 });
});
