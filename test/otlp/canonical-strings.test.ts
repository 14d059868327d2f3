/** canonical() hands back an equal string, whether or not it is one the engine compares. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonical } from '../../src/otlp/canonical-strings.js';
import { ATTR_SIDE, SPAN_SSE_EVENT } from '../../packages/instrumentation/src/semconv.js';

test('canonical: equal strings back, known or not', () => {
  for (const s of [SPAN_SSE_EVENT, ATTR_SIDE, 'client', 'server', 'response', 'forkwatch.unknown', '', 'x'.repeat(70), 'héllo']) {
    // Built at run time, so not the literal's instance.
    const copy = Buffer.from(s, 'utf8').toString('utf8');
    assert.equal(canonical(copy), s);
  }
});
