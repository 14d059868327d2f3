import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_LABEL_VALUE_LENGTH,
  OVERFLOW_SERVICE,
  ServiceLabeler,
  UNKNOWN_SERVICE,
  sanitizeLabelValue,
} from '../../src/metrics/service-labeler.js';

test('the first maxServices names keep their name, later ones become other', () => {
  const fresh: string[] = [];
  const l = new ServiceLabeler(2, (s) => fresh.push(s));
  assert.equal(l.label('a'), 'a');
  assert.equal(l.label('b'), 'b');
  assert.equal(l.label('c'), OVERFLOW_SERVICE);
  assert.equal(l.label('d'), OVERFLOW_SERVICE);
  assert.equal(l.label('a'), 'a');
  assert.deepEqual(fresh, ['a', 'b', OVERFLOW_SERVICE], 'each label announced once');
  assert.deepEqual([...l.labels()], ['a', 'b', OVERFLOW_SERVICE]);
});

test('label values are sanitized: control characters dropped, length capped, empty named', () => {
  assert.equal(sanitizeLabelValue('a\nb\u0000c'), 'abc');
  const long = 'é'.repeat(200);
  assert.equal([...sanitizeLabelValue(long)].length, MAX_LABEL_VALUE_LENGTH);
  const l = new ServiceLabeler(5);
  assert.equal(l.label(''), UNKNOWN_SERVICE);
  assert.equal(l.label('x'.repeat(100)), 'x'.repeat(MAX_LABEL_VALUE_LENGTH));
  assert.equal(l.label('x'.repeat(90)), 'x'.repeat(MAX_LABEL_VALUE_LENGTH), 'names equal after the cut share a label');
});
