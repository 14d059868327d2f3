import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeText, SseParser } from '@forkwatch/instrumentation/wire';
import { describeEvent, mayAnswer } from '../../src/proxy/event-info.js';

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

test('mayAnswer is false only for data that describes no answer: every answer is read, escaped keys included', () => {
  const answers = [
    '{"jsonrpc":"2.0","id":3,"result":{}}',
    '{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"x"}}',
    '{"jsonrpc":"2.0","id":1,"res\\u0075lt":{}}',
    '{"jsonrpc":"2.0","id":2,"\\u0065rror":{"code":1,"message":"x"}}',
    '[{"jsonrpc":"2.0","method":"notifications/message","params":{}},{"jsonrpc":"2.0","id":9,"result":1}]',
    ' {"id":4, "result" : null}',
  ];
  for (const a of answers) {
    assert.ok(describeText(a).some((i) => i.kind === 'response' || i.kind === 'error'), `an answer: ${a}`);
    assert.equal(mayAnswer(a), true, a);
  }
  const others = [
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1,"total":5}}',
    '{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{}}',
    'not json',
    '',
  ];
  for (const o of others) assert.equal(mayAnswer(o), false, o);
  // Random messages built from keys and values that spell, or nearly spell, an answer's keys.
  const keys = ['id', 'result', 'error', 'method', 'params', 'resul', 'errors', 'res\\u0075lt', 'fault', 'mirror', 'x'];
  const values = ['1', '"2"', '{}', '{"result":1}', '"error"', 'null', '[1,{"error":{}}]'];
  let seed = 42;
  const pick = <T>(xs: readonly T[]): T => xs[(seed = (seed * 1103515245 + 12345) >>> 0) % xs.length]!;
  for (let n = 0; n < 5000; n++) {
    const members = Array.from({ length: 1 + (n % 4) }, () => `"${pick(keys)}":${pick(values)}`);
    const text = `{${members.join(',')}}`;
    const answer = describeText(text).some((i) => i.kind === 'response' || i.kind === 'error');
    if (!mayAnswer(text)) assert.equal(answer, false, text);
  }
});
