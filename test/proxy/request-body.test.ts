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

test('describeBody reads what describeText reads: tool names, tokens, escapes, repeated keys, batches', async () => {
  const { describeText } = await import('@forkwatch/instrumentation/wire');
  const { describeBody } = await import('../../src/proxy/request-body.js');
  const plain = (x: { kind: string; id?: string; method?: string; progressToken?: string; toolName?: string }): object => ({ kind: x.kind, id: x.id, method: x.method, progressToken: x.progressToken, toolName: x.toolName });
  const bodies = [
    call,
    '{"method":"tools/call","params":{"name":"progress","arguments":{"n":5,"name":"inner"},"_meta":{"progressToken":3,"name":"meta"}},"jsonrpc":"2.0","id":3}',
    '{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":7}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\\u0061me":"esc"}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a\\"b"}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"first"},"params":{"arguments":{}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}',
    '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"name":"not a tool"}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[{"name":"x"}]}',
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"timed out"}}',
    '  [{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"b1"}},{"jsonrpc":"2.0","method":"notifications/initialized"}]',
    '{"jsonrpc":"2.0","id":2,"result":{}}',
    'not json',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}',
  ];
  for (const b of bodies) assert.deepEqual(describeBody(b, 1 << 20).map(plain), describeText(b, 1 << 20).map(plain), b);
  assert.deepEqual(describeBody(call, call.length - 1).map(plain), describeText(call, call.length - 1).map(plain), 'over the bound');
  assert.deepEqual(describeBody('', 100).map(plain), describeText('', 100).map(plain), 'empty');
});
