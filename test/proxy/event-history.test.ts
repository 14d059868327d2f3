import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { digestHex, type EventSlot } from '@forkwatch/instrumentation/wire';
import { EventHistory } from '../../src/proxy/event-history.js';
import { SessionTable } from '../../src/proxy/session-table.js';
import type { WireSpans } from '../../src/proxy/wire-spans.js';

/** What `forkwatch.sse.payload.digest` must be: the first 64 bits of SHA-256 of the data, hex. */
const sha64 = (data: string): string => createHash('sha256').update(data, 'utf8').digest('hex').slice(0, 16);

function recorder(): { spans: WireSpans; emitted: Array<{ id: string; digest: string; bytes: number; kind: string | undefined; token: string | undefined }> } {
  const emitted: Array<{ id: string; digest: string; bytes: number; kind: string | undefined; token: string | undefined }> = [];
  const spans = { event: (_s: unknown, _id: unknown, e: EventSlot) => emitted.push({ id: e.id, digest: digestHex(e), bytes: e.bytes, kind: e.kind, token: e.token }) } as unknown as WireSpans;
  return { spans, emitted };
}

const origin = { incarnation: 'inc', protocolVersion: undefined };
const progress = (i: number): string => `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":${i},"message":"é ${i}"}}`;

test('a buffered event is digested when a moment emits it: the digest and bytes of its data as it passed', () => {
  const { spans, emitted } = recorder();
  const history = new EventHistory(spans, { perSession: 8, maxEvents: 64 }, false);
  const s = new SessionTable(10, 60_000, 16).create('S1', true);
  for (let i = 1; i <= 3; i++) history.record(s, 'S1', `e${i}`, progress(i), { kind: 'notification', method: 'notifications/progress', progressToken: 't' }, undefined, false, origin, i);
  assert.equal(emitted.length, 0, 'no moment: nothing emitted');
  history.moment(s, false);
  assert.deepEqual(
    emitted.map((e) => [e.id, e.digest, e.bytes, e.kind, e.token]),
    [1, 2, 3].map((i) => [`e${i}`, sha64(progress(i)), Buffer.byteLength(progress(i)), 'notification', 't']),
  );
});

test('past the text budget an event is digested as it passes; emitted live events carry their digest', () => {
  const { spans, emitted } = recorder();
  // A budget smaller than one event: nothing is kept undigested.
  const history = new EventHistory(spans, { perSession: 8, maxEvents: 64, maxTextChars: 10 }, false);
  const s = new SessionTable(10, 60_000, 16).create('S1', true);
  history.record(s, 'S1', 'e1', progress(1), { kind: 'notification' }, undefined, false, origin, 1);
  history.moment(s, true);
  history.record(s, 'S1', 'e2', progress(2), { kind: 'notification' }, undefined, false, origin, 2);
  assert.deepEqual(
    emitted.map((e) => [e.id, e.digest]),
    [
      ['e1', sha64(progress(1))],
      ['e2', sha64(progress(2))],
    ],
  );
});

test('an event recorded unread is described when its span is emitted: at a moment, past the text budget, or at once', () => {
  const data = [progress(1), 'not json', '{"jsonrpc":"2.0","id":"r1","result":{}}', ''];
  const expected = [
    ['notification', 't'],
    ['none', undefined],
    ['response', undefined],
    ['none', undefined],
  ];
  for (const [budget, immediate] of [
    [undefined, false],
    [10, false],
    [undefined, true],
  ] as const) {
    const { spans, emitted } = recorder();
    let unreadable = 0;
    const history = new EventHistory(spans, { perSession: 8, maxEvents: 64, maxTextChars: budget }, immediate, () => unreadable++);
    const s = new SessionTable(10, 60_000, 16).create('S1', true);
    // A slot reused unread must not keep its last event's description: the ring wraps first.
    for (let i = 0; i < 8; i++) history.record(s, 'S1', `old${i}`, '{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m"}}', { kind: 'error', id: 'x' }, undefined, false, origin, i);
    emitted.length = 0;
    data.forEach((d, i) => history.record(s, 'S1', `e${i}`, d, undefined, undefined, false, origin, 10 + i));
    history.moment(s, false);
    const label = `budget ${String(budget)}, immediate ${String(immediate)}`;
    assert.deepEqual(
      emitted.filter((e) => e.id.startsWith('e')).map((e) => [e.id, e.kind, e.token, e.digest]),
      data.map((d, i) => [`e${i}`, ...expected[i]!, sha64(d)]),
      label,
    );
    assert.equal(unreadable, 1, `${label}: the one non-JSON event, counted once`);
  }
});

test('a recorded unread event whose slot is reused before any moment is never read', () => {
  const { spans, emitted } = recorder();
  let unreadable = 0;
  const history = new EventHistory(spans, { perSession: 2, maxEvents: 64 }, false, () => unreadable++);
  const s = new SessionTable(10, 60_000, 16).create('S1', true);
  for (let i = 0; i < 5; i++) history.record(s, 'S1', `e${i}`, 'not json', undefined, undefined, false, origin, i);
  history.moment(s, false);
  assert.deepEqual(
    emitted.map((e) => e.id),
    ['e3', 'e4'],
  );
  assert.equal(unreadable, 2, 'only what a moment emitted was read');
});
