/**
 * What a proxy itself adds to a message's way, read off the loopback by tcpdump: the moment the
 * packet carrying it entered the proxy's socket and the moment the packet carrying it left, both
 * stamped by the kernel. The end-to-end transits of the latency phase hold the client's and the
 * server's own pauses and the machine's scheduling (a p99 of 5-10 ms through the bare pipe on an
 * idle 2-core machine, 2026-12-07), which an added p99 of 0.5 ms cannot be told apart from; the
 * packets' moments hold only the proxy's wake-up, its work and its write.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Bytes kept of each packet: several events of a call can share one (the stamps are in each). */
const SNAP_BYTES = 16384;

/** A stamp's packet (its moment, ns since the capture's first second) or its way through a proxy (ns). */
export interface PacketTransit {
  /** The proxy's listening port: which variant carried it. */
  port: number;
  ns: number;
}

/** Transits by stamp key (wire-call.ts: `m:` a message's stamp, `r:` a request's sentAt), ns. */
export type CaptureTransits = Map<string, PacketTransit>;

export interface WireCapture {
  /** Stops tcpdump and reads its file: every key seen entering and leaving a proxy. */
  stop(): Promise<{ transits: CaptureTransits; dropped: number; unmatched: number }>;
}

/**
 * A capture of the latency phase when one can be taken, else why not (`SIDECAR_CAPTURE=0`, no
 * tcpdump, or tcpdump refused: capturing needs root or CAP_NET_RAW): the bench then judges end to end.
 */
export async function tryCapture(upstreamPort: number, proxyPorts: readonly number[]): Promise<{ capture: WireCapture } | { reason: string }> {
  if (process.env.SIDECAR_CAPTURE === '0') return { reason: 'SIDECAR_CAPTURE=0' };
  if (spawnSync('tcpdump', ['--version'], { stdio: 'ignore' }).status !== 0) return { reason: 'no tcpdump here' };
  try {
    return { capture: await startCapture(upstreamPort, proxyPorts) };
  } catch (err) {
    return { reason: (err as Error).message.split('\n')[0]! };
  }
}

/**
 * Starts tcpdump on the loopback for the packets that carry data to or from `upstreamPort` and
 * the proxies' `proxyPorts`; resolves once it listens. Rejects when it cannot start.
 */
export async function startCapture(upstreamPort: number, proxyPorts: readonly number[]): Promise<WireCapture> {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-capture-'));
  const file = join(dir, 'wire.pcap');
  const ports = [upstreamPort, ...proxyPorts].map((p) => `port ${p}`).join(' or ');
  // --immediate-mode: each packet reaches tcpdump as it comes (in blocks, those of the last block
  // were lost at SIGINT); -Z root: the file stays where it was made; -B: 64 MiB of kernel buffer.
  const child: ChildProcess = spawn(
    'tcpdump',
    ['-i', 'lo', '-w', file, '-U', '--immediate-mode', '-Z', 'root', '-B', '65536', '-s', String(SNAP_BYTES), '--time-stamp-precision=nano', `tcp and (tcp[tcpflags] & tcp-push != 0) and (${ports})`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  try {
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (stderr.includes('listening on')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`tcpdump exited with ${String(code)}: ${stderr.trim()}`)));
      child.once('error', reject);
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    stop: async () => {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGINT');
      await exited;
      const dropped = Number(/(\d+) packets? dropped by kernel/.exec(stderr)?.[1] ?? 0);
      try {
        return { ...readTransits(readFileSync(file), upstreamPort, new Set(proxyPorts)), dropped };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** A message's stamp (a progress notification's `message`, an answer's `leftAt`) or a request's `sentAt`. */
const STAMPS = /"message":"([0-9.]+)"|"text":"done \d+ [0-9.e+-]+ ([0-9.]+)"|"sentAt":([0-9.]+)/g;

/**
 * Reads a pcap file (nanosecond stamps, Ethernet framing as Linux's loopback has, IPv4): a message
 * enters a proxy from the upstream's port and leaves from the proxy's own; a request enters to the
 * proxy's port and leaves to the upstream's. A key seen on one leg only (split across packets) is
 * counted as unmatched.
 */
export function readTransits(pcap: Buffer, upstreamPort: number, proxyPorts: ReadonlySet<number>): { transits: CaptureTransits; unmatched: number } {
  if (pcap.readUInt32LE(0) !== 0xa1b23c4d) throw new Error('capture: not a nanosecond pcap file');
  if (pcap.readUInt32LE(20) !== 1) throw new Error(`capture: link type ${pcap.readUInt32LE(20)}, Ethernet expected`);
  // Moments relative to the first packet's second: ns since the epoch are past 2^53.
  const sec0 = pcap.length >= 40 ? pcap.readUInt32LE(24) : 0;
  const enter = new Map<string, PacketTransit>();
  const leave = new Map<string, PacketTransit>();
  for (let at = 24; at + 16 <= pcap.length; ) {
    const ns = (pcap.readUInt32LE(at) - sec0) * 1e9 + pcap.readUInt32LE(at + 4);
    const len = pcap.readUInt32LE(at + 8);
    const p = at + 16;
    at = p + len;
    if (pcap.readUInt16BE(p + 12) !== 0x0800) continue;
    const ip = p + 14;
    const tcp = ip + (pcap[ip]! & 0x0f) * 4;
    const src = pcap.readUInt16BE(tcp);
    const dst = pcap.readUInt16BE(tcp + 2);
    const text = pcap.toString('latin1', tcp + (pcap[tcp + 12]! >> 4) * 4, p + len);
    for (const m of text.matchAll(STAMPS)) {
      const request = m[3] !== undefined;
      const key = request ? `r:${m[3]}` : `m:${m[1] ?? m[2]}`;
      // The variant is the proxy's listening port: a request's destination, a message's source.
      if (request ? proxyPorts.has(dst) : src === upstreamPort) enter.set(key, { port: dst, ns });
      else if (request ? dst === upstreamPort : proxyPorts.has(src)) leave.set(key, { port: src, ns });
    }
  }
  const transits: CaptureTransits = new Map();
  let unmatched = 0;
  for (const [key, out] of leave) {
    const into = enter.get(key);
    if (into === undefined) unmatched++;
    else transits.set(key, { port: key.startsWith('r:') ? into.port : out.port, ns: out.ns - into.ns });
  }
  for (const key of enter.keys()) if (!leave.has(key)) unmatched++;
  return { transits, unmatched };
}

/** The capture keys of one call of the latency phase (wire-call.ts). */
export interface CallKeys {
  requestKey: string;
  messageKeys: string[];
}

/**
 * Each variant's transits through its proxy, ms, call by call in the order made: `calls[v][i]` is
 * call i of variant v, and call i was made at the same moment for every variant. A call missing any
 * key in any variant is left out of all of them, so that the samples stay paired (and a call's
 * messages together: every call has as many).
 */
export function pairedTransits(calls: ReadonlyMap<string, readonly CallKeys[]>, transits: CaptureTransits): { byVariant: Map<string, { request: number[]; message: number[] }>; leftOut: number } {
  const lists = [...calls.values()];
  const n = Math.min(...lists.map((l) => l.length));
  const ms = (key: string): number | undefined => {
    const t = transits.get(key);
    return t === undefined ? undefined : t.ns / 1e6;
  };
  const byVariant = new Map([...calls.keys()].map((k) => [k, { request: [] as number[], message: [] as number[] }]));
  let leftOut = 0;
  for (let i = 0; i < n; i++) {
    const rows = lists.map((l) => {
      const c = l[i]!;
      const request = ms(c.requestKey);
      const message = c.messageKeys.map(ms);
      return request === undefined || message.includes(undefined) ? undefined : { request, message: message as number[] };
    });
    if (rows.includes(undefined)) {
      leftOut++;
      continue;
    }
    [...calls.keys()].forEach((k, j) => {
      const into = byVariant.get(k)!;
      into.request.push(rows[j]!.request);
      into.message.push(...rows[j]!.message);
    });
  }
  return { byVariant, leftOut };
}
