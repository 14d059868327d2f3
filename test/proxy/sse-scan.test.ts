import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseParser, type SseEvent } from '../../src/proxy/building-blocks.js';
import { hashHi, idHash } from '../../src/proxy/id-hash.js';
import { payloadPrint } from '../../src/proxy/payload-print.js';
import { printOf, scanEvents, type ScannedEvent } from '../../src/proxy/sse-scan.js';

const MAX = 4096;

/** What the text path makes of the chunk: SseParser's events, and whether it ended between events. */
function parsed(text: string): { events: Array<Pick<SseEvent, 'id' | 'event' | 'data'>>; idle: boolean } {
  const p = new SseParser(MAX);
  const events = p.push(text).map((e) => ({ id: e.id, event: e.event, data: e.data }));
  return { events, idle: p.idle };
}

function scanned(chunk: Buffer): Array<Pick<SseEvent, 'id' | 'event' | 'data'>> | undefined {
  const out: ScannedEvent[] = [];
  if (!scanEvents(chunk, MAX, out)) return undefined;
  for (const e of out) {
    // The hashes taken off the bytes are the strings' own.
    assert.equal(e.print, payloadPrint(e.data));
    assert.equal(printOf(e), e.print);
    if (e.id !== undefined) {
      assert.equal(e.idLo, idHash(e.id));
      assert.equal(e.idHi, hashHi());
    }
  }
  return out.map((e) => ({ id: e.id, event: e.event, data: e.data }));
}

const SDK_EVENT = (i: number): string =>
  `event: message\nid: 0b6f3c2e-7d1a-4e55-9c3b-5a2f8e1d4c70_1765000000000_k3j2h1${i}\ndata: {"method":"notifications/progress","params":{"progressToken":7,"progress":${i},"total":50},"jsonrpc":"2.0"}\n\n`;

test('the SDK\'s events, one or several to a chunk, read off the bytes as the text parser reads them', () => {
  for (const text of [SDK_EVENT(1), SDK_EVENT(1) + SDK_EVENT(2) + SDK_EVENT(3), 'id: 7\ndata: \n\n', 'data: x\n\n', 'id:\n\n', 'event: ping\ndata: {}\n\n', ': keep-alive\n\nretry: 10\nid: 1\ndata: a:b\n\n']) {
    const want = parsed(text);
    assert.equal(want.idle, true);
    assert.deepEqual(scanned(Buffer.from(text)), want.events, JSON.stringify(text));
  }
  // An event with neither id nor data line is not one; a blank line alone neither.
  assert.deepEqual(scanned(Buffer.from('event: x\n\n\n\n')), []);
});

test('anything else is left to the text path: CR, past ASCII, NUL, a second data line, no colon, a cut event, an oversized one', () => {
  for (const text of [
    'id: 1\r\ndata: x\r\n\r\n',
    'id: 1\ndata: é\n\n',
    'id: 1\0\ndata: x\n\n',
    'data: a\ndata: b\n\n',
    'data\n\n',
    'id: 1\ndata: x\n',
    SDK_EVENT(1).slice(0, 40),
    `id: 1\ndata: ${'x'.repeat(MAX)}\n\n`,
  ]) {
    assert.equal(scanned(Buffer.from(text)), undefined, JSON.stringify(text));
  }
});

test('fuzzed chunks: whenever the bytes are read, they give the text parser\'s events, and it ended between events', () => {
  // Pieces that make and break the cases the scanner takes on.
  const pieces = ['data', 'id', 'event', 'retry', ':', ': ', ' ', '\n', '\n\n', '\r', 'x', '{"a":1}', 'é', '\0', 'da', 'ta:', 'message', '1', 'd'];
  let seed = 12345;
  const rand = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  let read = 0;
  for (let round = 0; round < 20_000; round++) {
    let text = '';
    const parts = 1 + rand(14);
    for (let k = 0; k < parts; k++) text += pieces[rand(pieces.length)];
    if (rand(2) === 0) text += '\n\n';
    const got = scanned(Buffer.from(text));
    if (got === undefined) continue;
    read++;
    const want = parsed(text);
    assert.equal(want.idle, true, JSON.stringify(text));
    assert.deepEqual(got, want.events, JSON.stringify(text));
  }
  // The fuzz reached the fast path often enough to mean something.
  assert.ok(read > 1000, `${read} chunks read off their bytes`);
});
