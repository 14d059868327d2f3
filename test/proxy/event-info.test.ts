import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeText, SseParser } from '@forkwatch/instrumentation/wire';
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

test('read in place in the frame its data line came in (SseEvent.frame), an event is described as its data is', () => {
  const datas = [
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1,"total":5}}',
    '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"done"}]}}',
    ' [{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]',
    '{"result":1',
    '12',
    'not json',
  ];
  const frame = datas.map((d, i) => `id: e${i}\ndata: ${d}\n\n`).join('');
  const events = new SseParser(1 << 20).push(frame);
  assert.equal(events.length, datas.length);
  for (const ev of events) {
    assert.equal(ev.frame, frame, 'one data line: its frame is given');
    assert.deepEqual(describeEvent(ev.data, ev.frame, ev.dataStart).map(plain), describeEvent(ev.data).map(plain), ev.data);
  }
});
