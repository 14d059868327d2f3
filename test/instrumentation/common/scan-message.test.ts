import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeText } from '../../../packages/instrumentation/src/common/jsonrpc-info.js';
import { MessageScanner } from '../../../packages/instrumentation/src/common/scan-message.js';
import { inspectData } from '../../../packages/instrumentation/src/client/inspect-message.js';

/** What the records kept before the scanner: describeText's first info (server), inspectData (client). */
function expected(text: string, firstOfBatch: boolean): object {
  const i = firstOfBatch ? (describeText(text)[0] ?? { kind: 'none' }) : inspectData(text, 1024 * 1024);
  // The tool name: describeText's (inspectData reads none); a batch read as none has none.
  const batch = !firstOfBatch && text.trimStart().startsWith('[');
  return { kind: i.kind, id: i.id, method: i.method, progressToken: i.progressToken, toolName: batch ? undefined : describeText(text)[0]?.toolName };
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
  // Skipped values (result, other params) passed by indexOf: what looks like a wanted key inside
  // them is not one, escaped quotes and backslashes do not end their strings, later top-level
  // keys are still read and the last repeated key wins.
  '{"result":{"id":"inner","method":"x","params":{"progressToken":"no"}},"jsonrpc":"2.0","id":"outer"}',
  '{"result":{"content":[{"type":"text","text":"\\\\"},{"type":"text","text":"\\\\\\"]}\\\\"}]},"id":1}',
  '{"result":{"t":"\\"\\"\\"}"},"id":2,"id":3}',
  '{"result":["\\\\","]","\\u005d",{"a":"\\\\\\"}"}],"method":"late","id":4}',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"data":{"progressToken":"deep"},"progressToken":"top","list":["progressToken","_meta"]}}',
  '{"jsonrpc":"2.0","method":"tools/call","id":1,"params":{"arguments":{"_meta":{"progressToken":"arg"}},"_meta":{"progressToken":"meta","x":{"progressToken":"not"}}}}',
  '{"jsonrpc":"2.0","method":"tools/call","id":1,"params":{"_meta":{"progressToken":"first"},"_meta":{"other":1}}}',
  '{"jsonrpc":"2.0","method":"tools/call","id":1,"params":{"_meta":{"progressToken":"a"}},"method":"notifications/progress","params":{"progressToken":"b"}}',
  '{"result":{"a":"x\\\\"},"id":"\\\\"}',
  '{"result":{"a":"no end}',
  '{"result":{"a":"esc at end\\',
  '{"result":[{"a":"b"}]]}',
  '{"error":{"data":"{\\"result\\":1}"},"id":9,"result":{"x":["}"]}}',
  // Numbers: integers of up to 15 digits are kept as written, others as String(Number) gives them.
  '{"id":-5,"result":0}',
  '{"id":0,"result":0}',
  '{"id":-0.0,"result":0}',
  '{"id":123456789012345,"result":0}',
  '{"id":-123456789012345,"result":0}',
  '{"id":9007199254740993,"result":0}',
  '{"id":1E2,"result":0}',
  '{"id":10.5e-1,"result":0}',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":-7,"progress":1}}',
  // A method like the last one read, but not it: compared in place, never mistaken.
  '{"jsonrpc":"2.0","method":"notifications/progresS","params":{"progressToken":1}}',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}',
  '{"jsonrpc":"2.0","method":"notifications/progress2","params":{"progressToken":1}}',
  '{"jsonrpc":"2.0","method":"notifications\\/progress","params":{"progressToken":1}}',
  '{"jsonrpc":"2.0","method":"","id":1}',
  // Tool names: params.name of a tools/call when a string, the last repeated one, escapes read.
  '{"params":{"arguments":{"name":"inner"},"name":"progress","_meta":{"name":"meta"}},"method":"tools/call","id":2}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a\\u00e9\\"b"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\\u0061me":"escaped key"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gone"},"params":{}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/cal\\u006c","params":{"name":"escaped method"}}',
  '{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"not a tool"}}',
  '[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"batched"}}]',
];

describe('message scanner', () => {
  for (const firstOfBatch of [true, false]) {
    it(`reads what ${firstOfBatch ? 'describeText' : 'inspectData'} reads of each case`, () => {
      const scanner = new MessageScanner(1024 * 1024, firstOfBatch);
      for (const text of CASES) {
        const m = scanner.scan(text);
        const got = { kind: m.kind, id: m.id, method: m.method, progressToken: m.progressToken, toolName: m.toolName };
        assert.deepEqual(got, expected(text, firstOfBatch), text);
      }
    });
  }

  it('reads a range of a frame as it reads that slice, and nothing outside it', () => {
    // Around each case: what could mislead a scan that strays out of its range (digits that would
    // extend a number, quotes, brackets, a backslash, literals, another message).
    const befores = ['', 'data: ', '{"id":"x","result":', '"\\'];
    const afters = ['', '\n', '5', '.5e3', '"}', '}]', '\\"', 'rue', ' ,"id":9}', '{"method":"m"}'];
    for (const firstOfBatch of [true, false]) {
      const scanner = new MessageScanner(1024 * 1024, firstOfBatch);
      const plain = new MessageScanner(1024 * 1024, firstOfBatch);
      for (const text of CASES) {
        const want = plain.scan(text);
        const w = { kind: want.kind, id: want.id, method: want.method, progressToken: want.progressToken };
        for (const before of befores) {
          for (const after of afters) {
            const m = scanner.scanRange(before + text + after, before.length, before.length + text.length);
            assert.deepEqual({ kind: m.kind, id: m.id, method: m.method, progressToken: m.progressToken }, w, JSON.stringify([before, text, after]));
          }
        }
      }
    }
  });

  it('reads what describeText reads of generated messages with nested strings full of quotes, backslashes and brackets', () => {
    // A fixed-seed generator: the same messages every run.
    let seed = 15;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pieces = ['"', '\\', '{', '}', '[', ']', 'id', 'result', 'progressToken', '_meta', ':', ',', 'a', 'é', '\u2028'];
    const str = (): string => Array.from({ length: rnd(6) }, () => pieces[rnd(pieces.length)]).join('');
    const val = (depth: number): unknown => {
      const k = rnd(depth > 2 ? 3 : 5);
      if (k === 0) return str();
      if (k === 1) return rnd(100);
      if (k === 2) return rnd(2) === 0 ? null : true;
      if (k === 3) return Array.from({ length: rnd(3) }, () => val(depth + 1));
      return Object.fromEntries(Array.from({ length: rnd(3) }, () => [rnd(3) === 0 ? pieces[6 + rnd(4)]! : str(), val(depth + 1)]));
    };
    const scanner = new MessageScanner(1024 * 1024, true);
    for (let n = 0; n < 500; n++) {
      const members: string[] = [];
      for (let m = rnd(5) + 1; m > 0; m--) {
        const key = ['id', 'result', 'method', 'params', 'error', 'jsonrpc'][rnd(6)]!;
        // params is read member by member: its keys and _meta's are plain (an escaped one goes to JSON.parse).
        const v = key === 'params' ? (rnd(3) === 0 ? [val(1)] : { progressToken: str(), name: rnd(2) === 0 ? str() : val(1), _meta: { progressToken: rnd(9), y: val(1) }, x: val(1) }) : key === 'method' ? (rnd(2) === 0 ? 'tools/call' : str()) : val(0);
        members.push(`${JSON.stringify(key)}:${JSON.stringify(v)}`);
      }
      const text = `{${members.join(',')}}`;
      const m = scanner.scan(text);
      assert.deepEqual({ kind: m.kind, id: m.id, method: m.method, progressToken: m.progressToken, toolName: m.toolName }, expected(text, true), text);
    }
    // All read plainly: a wrong skip cannot hide behind the JSON.parse slow path.
    assert.equal(scanner.slowScans, 0);
  });

  it('reads plainly what it can: skipped values with quotes, backslashes and brackets in their strings', () => {
    const scanner = new MessageScanner(1024 * 1024, true);
    const values = [{ a: '"', b: '}' }, ['"', ']', { x: '"}' }], { a: '\\', b: '"},"id":"fake' }, ['"[', '"]'], { a: '"', id: 'fake' }, '\\"{', { c: 'x\\' }];
    for (const v of values) {
      for (const text of [JSON.stringify({ result: v, id: 'real' }), JSON.stringify({ jsonrpc: '2.0', method: 'm', params: { other: v, progressToken: 't' }, id: 1 })]) {
        const m = scanner.scan(text);
        assert.deepEqual({ kind: m.kind, id: m.id, method: m.method, progressToken: m.progressToken, toolName: m.toolName }, expected(text, true), text);
      }
    }
    assert.equal(scanner.slowScans, 0);
  });

  it('reads nothing past maxChars', () => {
    const scanner = new MessageScanner(10, true);
    assert.equal(scanner.scan('{"jsonrpc":"2.0","id":1,"result":{}}').kind, 'none');
  });
});
