import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeText } from '../../../packages/instrumentation/src/common/jsonrpc-info.js';
import { detach, MessageScanner } from '../../../packages/instrumentation/src/common/scan-message.js';
import { inspectData } from '../../../packages/instrumentation/src/client/inspect-message.js';

/** What the records kept before the scanner: describeText's first info (server), inspectData (client). */
function expected(text: string, firstOfBatch: boolean): object {
  const i = firstOfBatch ? (describeText(text)[0] ?? { kind: 'none' }) : inspectData(text, 1024 * 1024);
  return { kind: i.kind, id: i.id, method: i.method, progressToken: i.progressToken };
}

const CASES = [
  '{"method":"notifications/progress","params":{"progressToken":1,"progress":2,"total":5,"message":"step"},"jsonrpc":"2.0"}',
  '{"result":{"content":[{"type":"text","text":"a \\"quoted\\" } ] { text"}]},"jsonrpc":"2.0","id":7}',
  '{"jsonrpc":"2.0","id":"req-0123456789abcdef","method":"sampling/createMessage","params":{"_meta":{"progressToken":"tok-0123456789abcdef"},"messages":[]}}',
  '{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"Session not found"}}',
  '{"jsonrpc":"2.0","id":1.0,"result":null}',
  '{"jsonrpc":"2.0","id":-0,"result":{}}',
  '{"jsonrpc":"2.0","id":1e2,"result":{}}',
  '{"jsonrpc":"2.0","id":null,"result":{}}',
  '{"jsonrpc":"2.0","id":true,"method":"x"}',
  '{"jsonrpc":"2.0","method":7}',
  '{"jsonrpc":"2.0","method":"a","method":"notifications/progress","params":{"progressToken":"z"}}',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"a"},"params":{"progress":1}}',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":[1,2]}',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{"x":1}}}',
  '{"jsonrpc":"2.0","method":"tools/call","id":"9","params":{"name":"t","_meta":{"progressToken":5,"traceparent":"00-x"}}}',
  '{"jsonrpc":"2.0","method":"notifications/message","params":{"_meta":{"progressToken":5}}}',
  '{"id":"\\u0041bc","method":"m\\u0065thod"}',
  '{"\\u0069d":5,"result":1}',
  '  {"result" : 1 , "id" : 2 }  ',
  '[{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}]',
  '{"result":1}x',
  '{"result":1',
  '{"result":tru}',
  '{"result":01}',
  '{"id":"a\nb","result":1}',
  '"just a string"',
  '42',
  '',
  'not json',
  '{}',
  '{"jsonrpc":"2.0","result":{"a":[{"b":{"c":[1,2,{"d":"}"}]}}]},"id":"x"}',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":12345678901234567890}}',
];

describe('message scanner', () => {
  for (const firstOfBatch of [true, false]) {
    it(`reads what ${firstOfBatch ? 'describeText' : 'inspectData'} reads of each case`, () => {
      const scanner = new MessageScanner(1024 * 1024, firstOfBatch);
      for (const text of CASES) {
        const m = scanner.scan(text);
        const got = { kind: m.kind, id: m.id, method: m.method, progressToken: m.progressToken };
        assert.deepEqual(got, expected(text, firstOfBatch), text);
      }
    });
  }

  it('reads nothing past maxChars', () => {
    const scanner = new MessageScanner(10, true);
    assert.equal(scanner.scan('{"jsonrpc":"2.0","id":1,"result":{}}').kind, 'none');
  });

  it('detach returns an equal string for any code units', () => {
    for (const s of ['short', 'x'.repeat(40), 'a\ud800b'.repeat(10), 'é€𝄞'.repeat(100), 'y'.repeat(2000)]) assert.equal(detach(s), s);
  });
});
