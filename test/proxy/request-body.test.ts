import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestBody } from '../../src/proxy/request-body.js';

const call = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t"}}';

test('a body that came in chunks is read whole, once', () => {
  const b = new RequestBody(1024);
  b.push(Buffer.from(call.slice(0, 10)));
  b.push(Buffer.from(call.slice(10)));
  const infos = b.infos();
  assert.deepEqual([infos.length, infos[0]?.kind, infos[0]?.id, infos[0]?.method], [1, 'request', '7', 'tools/call']);
  assert.equal(b.text, call);
  // Read once: what comes after is not kept, the answer stands.
  b.push(Buffer.from('{"jsonrpc":"2.0","method":"x"}'));
  assert.equal(b.infos(), infos);
});

test('past its bound a body keeps nothing and reads as no message', () => {
  const b = new RequestBody(call.length - 1);
  b.push(Buffer.from(call));
  assert.deepEqual(b.infos(), []);
  assert.equal(b.text, undefined);
});
