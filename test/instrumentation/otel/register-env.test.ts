import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readRegisterEnv } from '../../../packages/instrumentation/src/otel/register-env.js';

describe('readRegisterEnv', () => {
  it('reads FORKWATCH_RECORD_RAW_SESSION_ID and FORKWATCH_REQUEST_SPAN_DELAY_MS', () => {
    assert.deepEqual(readRegisterEnv({ FORKWATCH_RECORD_RAW_SESSION_ID: 'true', FORKWATCH_REQUEST_SPAN_DELAY_MS: '2500' }), {
      options: { recordRawSessionId: true, requestSpanDelayMs: 2500 },
      warnings: [],
    });
    assert.deepEqual(readRegisterEnv({ FORKWATCH_REQUEST_SPAN_DELAY_MS: '0' }).options, { requestSpanDelayMs: 0 });
    assert.deepEqual(readRegisterEnv({}), { options: {}, warnings: [] });
  });

  it('warns about a bad value and ignores it, never throws', () => {
    for (const bad of ['-1', '1.5', '1s', 'x'.repeat(100)]) {
      const r = readRegisterEnv({ FORKWATCH_REQUEST_SPAN_DELAY_MS: bad });
      assert.deepEqual(r.options, {});
      assert.equal(r.warnings.length, 1);
      assert.match(r.warnings[0]!, /FORKWATCH_REQUEST_SPAN_DELAY_MS=.* ignored/);
      assert.ok(r.warnings[0]!.length < 200, 'the value is cut in the warning');
    }
    assert.equal(readRegisterEnv({ FORKWATCH_RECORD_RAW_SESSION_ID: 'maybe' }).warnings.length, 1);
  });
});
