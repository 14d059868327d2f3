import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFindingsQuery, parseSince } from '../../src/http/api-findings-query.js';
import { bearerMatches } from '../../src/http/api-auth.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');

test('since accepts RFC 3339, epoch ms and durations', () => {
  assert.equal(parseSince('2026-01-01T11:00:00Z', NOW), NOW - 3_600_000);
  assert.equal(parseSince('2026-01-01T13:00:00.5+02:00', NOW), NOW - 3_600_000 + 500);
  assert.equal(parseSince('1767268800000', NOW), 1767268800000);
  assert.equal(parseSince('15m', NOW), NOW - 900_000);
  assert.equal(parseSince('2h', NOW), NOW - 7_200_000);
  assert.equal(parseSince('1h30m', NOW), NOW - 5_400_000);
  assert.equal(parseSince('7d', NOW), NOW - 7 * 86_400_000);
  for (const bad of ['', 'yesterday', 'x15', '-5m', '2026-01-01', '2026-13-45T00:00:00Z', '1.5h', '15 m', '99999999999999999999']) {
    assert.throws(() => parseSince(bad, NOW), { code: 'FORKWATCH_ERR_BAD_QUERY' }, bad);
  }
});

test('findings query: kinds repeat and comma-split, others single, limit bounded', () => {
  assert.deepEqual(parseFindingsQuery({}, NOW), { limit: 100 });
  assert.deepEqual(
    parseFindingsQuery({ kind: ['replay_gap,dedup_loss', 'replay_gap'], service: 'svc', since: '1h', limit: '5', cursor: 'abc' }, NOW),
    { limit: 5, kind: ['replay_gap', 'dedup_loss'], service: 'svc', since: NOW - 3_600_000, cursor: 'abc' },
  );
  const bad: Array<Record<string, unknown>> = [
    { kind: 'nope' },
    { kind: 'replay_gap,nope' },
    { limit: '0' },
    { limit: '1001' },
    { limit: '1e2' },
    { limit: ['1', '2'] },
    { service: ['a', 'b'] },
    { service: '' },
    { since: 'soon' },
    { cursor: 'x'.repeat(600) },
  ];
  for (const q of bad) assert.throws(() => parseFindingsQuery(q, NOW), { code: 'FORKWATCH_ERR_BAD_QUERY' }, JSON.stringify(q));
});

test('bearer check', () => {
  assert.equal(bearerMatches('Bearer s3cret', 's3cret'), true);
  assert.equal(bearerMatches('bearer s3cret', 's3cret'), true);
  assert.equal(bearerMatches('Bearer s3cre', 's3cret'), false);
  assert.equal(bearerMatches('Basic s3cret', 's3cret'), false);
  assert.equal(bearerMatches('Bearer', 's3cret'), false);
  assert.equal(bearerMatches(undefined, 's3cret'), false);
});
