import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { payloadDigest, sessionKey } from '../../../packages/instrumentation/src/common/session-key.js';

describe('session keys and payload digests', () => {
  it('is the first 32 hex chars of SHA-256(salt || id)', () => {
    const expected = createHash('sha256').update('saltsess-1').digest('hex').slice(0, 32);
    assert.equal(sessionKey('sess-1', 'salt'), expected);
    assert.equal(sessionKey('sess-1', 'salt'), expected, 'cached value is the same');
  });

  it('depends on the salt and never contains the id', () => {
    const id = 'f81d4fae-7dec-11d0-a765-00a0c91e6bf6';
    assert.notEqual(sessionKey(id, 'a'), sessionKey(id, 'b'));
    assert.notEqual(sessionKey(id, ''), sessionKey(id, 'a'));
    assert.ok(!sessionKey(id, '').includes(id.slice(0, 8)));
  });

  it('stays correct past the memo limit', () => {
    for (let i = 0; i < 5000; i++) sessionKey(`s${i}`, 'memo');
    assert.equal(sessionKey('s0', 'memo'), createHash('sha256').update('memos0').digest('hex').slice(0, 32));
  });

  it('digests payloads to 16 hex chars over UTF-8', () => {
    assert.equal(payloadDigest('é'), createHash('sha256').update(Buffer.from('é', 'utf8')).digest('hex').slice(0, 16));
    assert.equal(payloadDigest(''), createHash('sha256').update('').digest('hex').slice(0, 16));
  });
});
