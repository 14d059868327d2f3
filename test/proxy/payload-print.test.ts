import { test } from 'node:test';
import assert from 'node:assert/strict';
import { payloadPrint } from '../../src/proxy/payload-print.js';

test('payloadPrint: the same data gives the same print; any change of a character or the length gives another', () => {
  const base = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}';
  assert.equal(payloadPrint(base), payloadPrint(String(base)));
  const seen = new Set<number>([payloadPrint(base), payloadPrint(''), payloadPrint(base + ' ')]);
  assert.equal(seen.size, 3);
  for (let i = 0; i < base.length; i++) {
    const changed = base.slice(0, i) + String.fromCharCode(base.charCodeAt(i) ^ 1) + base.slice(i + 1);
    const p = payloadPrint(changed);
    assert.ok(!seen.has(p), `a change at ${i} must change the print`);
    seen.add(p);
  }
  assert.ok(Number.isSafeInteger(payloadPrint(base)) && payloadPrint(base) >= 0);
  assert.notEqual(payloadPrint('\u00e9'), payloadPrint('e\u0301'), 'UTF-16 units, not normalized text');
});

test('payloadPrint read in place in a larger frame is the print of the data', () => {
  const data = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}';
  for (const [before, after] of [['', ''], ['data: ', '\n\n'], ['x'.repeat(100), 'é€']] as const) {
    assert.equal(payloadPrint(data, before + data + after, before.length), payloadPrint(data));
  }
  assert.notEqual(payloadPrint(data, `data: ${data}X`, 5), payloadPrint(data), 'a range one char off is another print');
});
