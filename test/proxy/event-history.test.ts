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
