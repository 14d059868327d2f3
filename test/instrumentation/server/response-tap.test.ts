import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tapResponse } from '../../../packages/instrumentation/src/server/response-tap.js';
import type { SseEvent } from '../../../packages/instrumentation/src/common/sse-parser.js';
import { listen } from './harness.js';

describe('tapResponse', { timeout: 10_000 }, () => {
  it('passes a malformed SSE body through byte for byte and parses what it can', async () => {
    // CRLF lines, a NUL in an id (ignored per the spec), invalid JSON, a 3-byte char split across
    // writes, a comment, a field without colon, no final blank line.
    const euro = Buffer.from('€', 'utf8');
    const parts: Buffer[] = [
      Buffer.from('id: 1\r\ndata: {not json\r\n\r\n: comment\nid: a\0b\ndata\n\nid: 2\ndata: '),
      euro.subarray(0, 1),
      euro.subarray(1),
      Buffer.from('\n\nid: 3\ndata: unterminated'),
    ];
    const expected = Buffer.concat(parts);
    const events: SseEvent[] = [];
    const heads: Array<[number, string | undefined]> = [];
    const srv = await listen((_req, res) => {
      tapResponse(res, {
        onHead: (status, header) => heads.push([status, header('content-type')]),
        onSseEvent: (ev) => {
          events.push(ev);
          throw new Error('hooks may throw; the response must not notice');
        },
      });
      res.setHeader('x-app', '1');
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(parts[0]);
      res.write(parts[1]);
      res.write(parts[2]!.toString('latin1'), 'latin1');
      res.end(parts[3]);
    });
    try {
      const res = await fetch(srv.url);
      const got = Buffer.from(await res.arrayBuffer());
      assert.equal(res.headers.get('x-app'), '1');
      assert.ok(got.equals(expected), 'bytes unchanged');
      assert.deepEqual(heads, [[200, 'text/event-stream']]);
      assert.deepEqual(
        events.map((e) => [e.id, e.data]),
        [
          ['1', '{not json'],
          [undefined, ''],
          ['2', '€'],
        ],
      );
    } finally {
      await srv.close();
    }
  });

  it('does not parse non-SSE bodies and sees implicit heads', async () => {
    const events: SseEvent[] = [];
    const statuses: number[] = [];
    const srv = await listen((_req, res) => {
      tapResponse(res, { onHead: (s) => statuses.push(s), onSseEvent: (e) => events.push(e) });
      res.statusCode = 404;
      res.setHeader('content-type', 'application/json');
      res.end('id: 1\ndata: x\n\n');
    });
    try {
      const res = await fetch(srv.url);
      assert.equal(await res.text(), 'id: 1\ndata: x\n\n');
      assert.deepEqual(statuses, [404]);
      assert.equal(events.length, 0);
    } finally {
      await srv.close();
    }
  });

  it('without an SSE hook leaves write and end untouched and still sees the head', async () => {
    const heads: Array<[number, string | undefined]> = [];
    let untouched: boolean | undefined;
    const srv = await listen((_req, res) => {
      const { write, end } = res;
      tapResponse(res, { onHead: (s, header) => heads.push([s, header('content-type')]) });
      untouched = res.write === write && res.end === end;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: a\n\n');
      res.end();
    });
    try {
      const res = await fetch(srv.url);
      assert.equal(await res.text(), 'data: a\n\n');
      assert.equal(untouched, true);
      assert.deepEqual(heads, [[200, 'text/event-stream']]);
    } finally {
      await srv.close();
    }
  });
});
