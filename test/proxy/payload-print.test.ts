import { test } from 'node:test';
import assert from 'node:assert/strict';
import { payloadPrint, payloadPrintBytes } from '../../src/proxy/payload-print.js';

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

test('payloadPrint: a change in the high byte of a character, or past the first piece the hash copies, changes the print', () => {
  assert.notEqual(payloadPrint('{"a":"\u0141"}'), payloadPrint('{"a":"\u0041"}'), 'U+0141 and U+0041 share their low byte');
  const long = `{"result":"${'x'.repeat(5000)}"}`;
  const prints = new Set<number>([payloadPrint(long)]);
  for (const at of [1023, 1024, 1025, 2048, long.length - 2]) prints.add(payloadPrint(long.slice(0, at) + 'y' + long.slice(at + 1)));
  assert.equal(prints.size, 6);
});

test('payloadPrintBytes over ASCII bytes is payloadPrint of the string', () => {
  const data = '{"method":"notifications/progress","params":{"progressToken":7,"progress":3,"total":50},"jsonrpc":"2.0"}';
  for (const d of [data, data.slice(1), '']) {
    const b = Buffer.from(`data: ${d}\n\n`);
    assert.equal(payloadPrintBytes(b, 6, 6 + d.length), payloadPrint(d));
  }
});
