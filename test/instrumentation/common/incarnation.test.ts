import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatEventId, newIncarnation, parseEventId } from '../../../packages/instrumentation/src/common/incarnation.js';

describe('incarnation ids', () => {
  it('mints 16 lowercase hex chars, distinct', () => {
    const a = newIncarnation();
    assert.match(a, /^[0-9a-f]{16}$/);
    assert.notEqual(a, newIncarnation());
  });

  it('round-trips a guarded event id', () => {
    const inc = newIncarnation();
    assert.deepEqual(parseEventId(formatEventId(inc, 42)), { seq: 42, source: 'server', incarnation: inc });
  });

  it('reads plain counters', () => {
    assert.deepEqual(parseEventId('e7'), { seq: 7, source: 'counter' });
    assert.deepEqual(parseEventId('evt-12'), { seq: 12, source: 'counter' });
    assert.deepEqual(parseEventId('3'), { seq: 3, source: 'counter' });
  });

  it('refuses ids without a trustworthy sequence', () => {
    assert.deepEqual(parseEventId('_GET_stream_1733140000000_k3j4h5g6'), {});
    assert.deepEqual(parseEventId('0b6c3e0e-8a2f-4c5e-9f4a-1d2e3f4a5b6c_1733140000000_ab12'), {});
    assert.deepEqual(parseEventId(''), {});
    assert.deepEqual(parseEventId('e1234567890123456'), {}, 'more than 15 digits');
    assert.deepEqual(parseEventId('ABCDEF0123456789-1'), {}, 'upper-case hex is not a guarded id');
  });

  it('reads the longest ids of either shape (32 chars), and nothing longer', () => {
    const inc = newIncarnation();
    assert.deepEqual(parseEventId(`${inc}-123456789012345`), { seq: 123456789012345, source: 'server', incarnation: inc });
    assert.deepEqual(parseEventId('abcdefghijklmnop123456789012345'), { seq: 123456789012345, source: 'counter' });
    assert.deepEqual(parseEventId(`${inc}-1234567890123456`), {});
    assert.deepEqual(parseEventId('abcdefghijklmnopq123456789012345'), {});
  });
});
