import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeText } from '@forkwatch/instrumentation/wire';
import { describeEvent } from '../../src/proxy/event-info.js';

const plain = (x: { kind: string; id?: string; method?: string; progressToken?: string }): object => ({ kind: x.kind, id: x.id, method: x.method, progressToken: x.progressToken });

test('describeEvent reads what describeText reads, without building the message', () => {
  const samples = [
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1,"total":5}}',
    '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"done \\"x\\" ]}"}]}}',
    '{"jsonrpc":"2.0","id":"a-1","error":{"code":-32000,"message":"no"}}',
    '{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{"_meta":{"progressToken":"p"}}}',
    '{"result":1,"id":5}',
    'not json',
    '{}',
    '{"jsonrpc":"2.0","id":6,"result":{}',
  ];
  for (const s of samples) {
    const mine = describeEvent(s).map(plain);
    assert.deepEqual(mine, describeText(s).map(plain), s);
  }
  assert.deepEqual(describeEvent('').map(plain), [plain({ kind: 'none' })]);
});

test('a batch on a stream: every answer in it is described, as describeText does', () => {
  const batch = '[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"x"}}]';
  assert.deepEqual(
    describeEvent(batch).map((x) => [x.kind, x.id]),
    [
      ['response', '1'],
      ['error', '2'],
    ],
  );
});
