import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SseParser, type SseEvent } from '../../../packages/instrumentation/src/common/sse-parser.js';

const feedAll = (p: SseParser, chunks: string[]) => chunks.flatMap((c) => p.push(c));

/**
 * The events without where their data lay (frame, dataStart), checked on the way: one data line
 * is its frame's slice there; two or more give no frame.
 */
function plain(evs: readonly SseEvent[]): object[] {
  return evs.map(({ frame, dataStart, ...rest }) => {
    if (frame !== undefined) assert.equal(frame.slice(dataStart, dataStart! + rest.data.length), rest.data, 'data is its frame at dataStart');
    else assert.equal(dataStart, undefined);
    return rest;
  });
}
const eq = (got: readonly SseEvent[], want: readonly SseEvent[], msg?: string): void => assert.deepEqual(plain(got), plain(want), msg);

describe('SseParser', () => {
  it('parses id, event and multi-line data', () => {
    const evs = new SseParser().push('id: e1\nevent: message\ndata: a\ndata: b\n\n');
    eq(evs, [{ id: 'e1', event: 'message', data: 'a\nb' }]);
  });

  it('handles CRLF and lone CR line endings', () => {
    const p = new SseParser();
    eq(p.push('id: e1\r\ndata: x\r\n\r\nid: e2\rdata: y\r\r'), [{ id: 'e1', event: 'message', data: 'x' }]);
    // A CR ending the input may be half of a CRLF: the event completes with the next byte.
    eq(p.push(':'), [{ id: 'e2', event: 'message', data: 'y' }]);
  });

  it('finds each line end when LF, CR and CRLF lines mix in one buffer', () => {
    // The next CR is looked for once per buffer: LF lines before and after it must still end where they do.
    const text = 'id: a\ndata: 1\n\nid: b\rdata: 2\r\rid: c\r\ndata: 3\n\nid: d\ndata: 4\r\n\r\nid: e\ndata: 5\n\n';
    const want = ['a', 'b', 'c', 'd', 'e'].map((id, i) => ({ id, event: 'message', data: String(i + 1) }));
    eq(new SseParser().push(text), want);
    for (let size = 1; size < 6; size++) {
      const chunks: string[] = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
      eq(feedAll(new SseParser(), chunks), want, `chunk size ${size}`);
    }
  });

  it('gives the same events whatever the chunking, including a CRLF split across chunks', () => {
    const text = 'id: e1\r\ndata: {"a":1}\r\n\r\n: comment\r\nid: e2\r\nevent: message\r\ndata: \r\n\r\n';
    const whole = new SseParser().push(text);
    assert.equal(whole.length, 2);
    for (let size = 1; size < 8; size++) {
      const chunks: string[] = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
      eq(feedAll(new SseParser(), chunks), whole, `chunk size ${size}`);
    }
    // Split exactly between CR and LF: must not yield an extra blank line (an extra event).
    eq(feedAll(new SseParser(), ['id: e1\r', '\ndata: x\r', '\n\r', '\n']), [{ id: 'e1', event: 'message', data: 'x' }]);
  });

  it('ignores comments, unknown fields, and ids containing NUL; strips one leading space only', () => {
    eq(new SseParser().push(':hi\nfoo: bar\nid: a\0b\ndata:  two\n\n'), [{ event: 'message', data: ' two' }]);
  });

  it('skips an event whose data exceeds the bound, and recovers for the next', () => {
    const p = new SseParser(100);
    const evs = p.push(`id: big\ndata: ${'x'.repeat(60)}\ndata: ${'y'.repeat(60)}\n\nid: ok\ndata: small\n\n`);
    eq(evs, [{ id: 'ok', event: 'message', data: 'small' }]);
    assert.equal(p.oversized, 1);
  });

  it('assembles a long line from many small chunks (joined once its end comes)', () => {
    const data = 'q'.repeat(200_000);
    const text = `id: long\ndata: ${data}\r\n\r\nid: after\ndata: 2\n\n`;
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += 977) chunks.push(text.slice(i, i + 977));
    eq(feedAll(new SseParser(), chunks), [
      { id: 'long', event: 'message', data },
      { id: 'after', event: 'message', data: '2' },
    ]);
  });

  it('does not buffer an unterminated line past the bound', () => {
    const p = new SseParser(1000);
    let out = p.push('id: big\ndata: ');
    for (let i = 0; i < 50; i++) out = out.concat(p.push('z'.repeat(500)));
    out = out.concat(p.push('\n\nid: next\ndata: 1\n\n'));
    eq(out, [{ id: 'next', event: 'message', data: '1' }]);
    assert.ok(p.oversized >= 1);
    assert.ok((p as unknown as { buf: string }).buf.length < 1000);
  });

  it('with idsOnly, completes exactly the events with an id, whatever the chunking', () => {
    const text =
      'event: message\ndata: {"a":1}\n\n' +
      'event: other\n\n' +
      'id: 7\ndata: x\n\n' +
      'data: y\nid\n\n' +
      'event: message\ndata: {"b":2}\n\n' +
      'data: z\r\nid: 9\r\n\r\n' +
      'data: w\n\n';
    const withIds = new SseParser().push(text).filter((e) => e.id !== undefined);
    assert.deepEqual(withIds.map((e) => e.id), ['7', '', '9']);
    eq(new SseParser(undefined, true).push(text), withIds);
    const events = text.split(/(?<=\n\n)/);
    eq(feedAll(new SseParser(undefined, true), events), withIds, 'one event a chunk');
    for (let size = 1; size < 12; size++) {
      const chunks: string[] = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
      eq(feedAll(new SseParser(undefined, true), chunks), withIds, `chunk size ${size}`);
    }
    // An event type left over from a chunk cut mid-event does not leak into the next event.
    const p = new SseParser(undefined, true);
    eq([...p.push('event: custom\n'), ...p.push('data: a\n\n'), ...p.push('id: 1\ndata: b\n\n')], [{ id: '1', event: 'message', data: 'b' }]);
  });

  it('gives one data line its frame and place, whatever the chunking; two lines none', () => {
    const text = 'id: a\ndata: {"x":1}\n\nid: b\ndata: l1\ndata: l2\n\nid: c\ndata: \n\n';
    for (let size = 1; size <= text.length; size++) {
      const chunks: string[] = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
      const evs = feedAll(new SseParser(), chunks);
      assert.deepEqual(evs.map((e) => e.frame !== undefined), [true, false, true], `chunk size ${size}`);
      plain(evs);
    }
  });
});

it('idle: true between events only (nothing carried over, no field of an event under way)', () => {
  const p = new SseParser();
  assert.equal(p.idle, true);
  p.push('id: 1\n');
  assert.equal(p.idle, false);
  p.push('data: x\n\n');
  assert.equal(p.idle, true);
  p.push('data: half a li');
  assert.equal(p.idle, false);
  p.push('ne\n\nevent: x\n');
  assert.equal(p.idle, false);
  p.push('\n');
  assert.equal(p.idle, true);
});
