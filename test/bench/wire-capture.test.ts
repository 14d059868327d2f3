import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pairedTransits, readTransits } from '../../bench/sidecar/wire-capture.js';

const UP = 4000;
const PROXY = 5000;
const OTHER_PROXY = 5001;

/** A nanosecond pcap of Ethernet/IPv4/TCP packets, as tcpdump writes one off Linux's loopback. */
function pcap(packets: { sec: number; ns: number; src: number; dst: number; payload: string; ipv6?: boolean }[]): Buffer {
  const head = Buffer.alloc(24);
  head.writeUInt32LE(0xa1b23c4d, 0);
  head.writeUInt16LE(2, 4);
  head.writeUInt16LE(4, 6);
  head.writeUInt32LE(262144, 16);
  head.writeUInt32LE(1, 20);
  const records = packets.map((p) => {
    const payload = Buffer.from(p.payload, 'latin1');
    const eth = Buffer.alloc(14);
    eth.writeUInt16BE(p.ipv6 ? 0x86dd : 0x0800, 12);
    const ip = Buffer.alloc(20);
    ip[0] = 0x45;
    // TCP with 12 bytes of options (timestamps), as Linux sends: data offset 8 words.
    const tcp = Buffer.alloc(32);
    tcp.writeUInt16BE(p.src, 0);
    tcp.writeUInt16BE(p.dst, 2);
    tcp[12] = 8 << 4;
    const frame = Buffer.concat([eth, ip, tcp, payload]);
    const rec = Buffer.alloc(16);
    rec.writeUInt32LE(p.sec, 0);
    rec.writeUInt32LE(p.ns, 4);
    rec.writeUInt32LE(frame.length, 8);
    rec.writeUInt32LE(frame.length, 12);
    return Buffer.concat([rec, frame]);
  });
  return Buffer.concat([head, ...records]);
}

/** An SSE event as the bench's upstream sends it (JSON.stringify of the SDK's message). */
const progress = (stamp: string): string =>
  `event: message\nid: s_1_x\ndata: ${JSON.stringify({ method: 'notifications/progress', params: { progressToken: 1, progress: 1, total: 5, message: stamp }, jsonrpc: '2.0' })}\n\n`;
const answer = (leftAt: string): string =>
  `event: message\nid: s_2_y\ndata: ${JSON.stringify({ result: { content: [{ type: 'text', text: `done 5 0.1234 ${leftAt}` }] }, jsonrpc: '2.0', id: 7 })}\n\n`;
const request = (sentAt: number): string => `POST /mcp HTTP/1.1\r\n\r\n${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'progress', arguments: { n: 5, sentAt } } })}`;

describe('sidecar bench: what a proxy adds, read off the packets (issue 28)', () => {
  it('pairs each stamp entering a proxy with the same stamp leaving it, by direction and port', () => {
    const file = pcap([
      // The request: client -> proxy port, then proxy (an ephemeral port) -> upstream.
      { sec: 1_796_666_100, ns: 999_900_000, src: 40000, dst: PROXY, payload: request(1765.25) },
      { sec: 1_796_666_101, ns: 100_000, src: 40001, dst: UP, payload: request(1765.25) },
      // Two messages in one packet from the upstream, out in two packets from the proxy.
      { sec: 1_796_666_101, ns: 1_000_000, src: UP, dst: 40001, payload: progress('1765.5') + answer('1765.75') },
      { sec: 1_796_666_101, ns: 1_300_000, src: PROXY, dst: 40000, payload: progress('1765.5') },
      { sec: 1_796_666_101, ns: 1_900_000, src: PROXY, dst: 40000, payload: answer('1765.75') },
      // Seen entering only (cut across packets, say): unmatched, not a transit.
      { sec: 1_796_666_101, ns: 2_000_000, src: UP, dst: 40001, payload: progress('1766') },
      // Not IPv4: skipped.
      { sec: 1_796_666_101, ns: 3_000_000, src: UP, dst: 40001, payload: progress('1767'), ipv6: true },
    ]);
    const { transits, unmatched } = readTransits(file, UP, new Set([PROXY, OTHER_PROXY]));
    assert.deepEqual(
      [...transits].sort(),
      [
        ['m:1765.5', { port: PROXY, ns: 300_000 }],
        ['m:1765.75', { port: PROXY, ns: 900_000 }],
        // Across a second's boundary; moments since the epoch in ns are past 2^53.
        ['r:1765.25', { port: PROXY, ns: 200_000 }],
      ].sort(),
    );
    assert.equal(unmatched, 1);
  });

  it('refuses a file that is not a nanosecond pcap of Ethernet frames', () => {
    const micro = pcap([]);
    micro.writeUInt32LE(0xa1b2c3d4, 0);
    assert.throws(() => readTransits(micro, UP, new Set([PROXY])), /nanosecond/);
    const sll = pcap([]);
    sll.writeUInt32LE(113, 20);
    assert.throws(() => readTransits(sll, UP, new Set([PROXY])), /link type 113/);
  });

  it('keeps the calls paired: a call missing a key in any variant is left out of all', () => {
    const call = (i: number, v: string) => ({ requestKey: `r:${v}${i}`, messageKeys: [`m:${v}${i}a`, `m:${v}${i}b`] });
    const calls = new Map([
      ['bare pipe', [0, 1, 2].map((i) => call(i, 'b'))],
      ['forkwatch', [0, 1, 2].map((i) => call(i, 'f'))],
    ]);
    const t = new Map<string, { port: number; ns: number }>();
    for (const v of ['b', 'f']) {
      for (const i of [0, 1, 2]) {
        t.set(`r:${v}${i}`, { port: 1, ns: (i + 1) * 1e6 });
        t.set(`m:${v}${i}a`, { port: 1, ns: (i + 1) * 2e6 });
        t.set(`m:${v}${i}b`, { port: 1, ns: (i + 1) * 3e6 });
      }
    }
    t.delete('m:f1b');
    const { byVariant, leftOut } = pairedTransits(calls, t);
    assert.equal(leftOut, 1);
    assert.deepEqual(byVariant.get('bare pipe'), { request: [1, 3], message: [2, 3, 6, 9] });
    assert.deepEqual(byVariant.get('forkwatch'), { request: [1, 3], message: [2, 3, 6, 9] });
  });
});
