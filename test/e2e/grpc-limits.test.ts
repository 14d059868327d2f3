/**
 * The OTLP/gRPC port holds the HTTP port's limits, against a real `forkwatch serve` process over
 * real sockets (grpc-js clients and raw node:http2): the bytes-in-flight budget applies before a
 * message is buffered (issue 25 item 1), and stalled calls, idle connections and connection floods
 * are cut by the request timeout, the idle timeout and the connection limit (item 2).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { credentials, makeGenericClientConstructor, Metadata, type ServiceError } from '@grpc/grpc-js';
import { startDetector, waitFor, type DetectorProcess } from './helpers/detector.js';

const EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
const MiB = 1024 * 1024;

const cleanup: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

async function detector(args: string[]): Promise<DetectorProcess> {
  const d = await startDetector({ args });
  cleanup.push(() => d.kill());
  return d;
}

function rssOf(pid: number): { rss: number; hwm: number } {
  const txt = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string): number => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(txt)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

const RawClient = makeGenericClientConstructor(
  {
    Export: {
      path: EXPORT_PATH,
      requestStream: false,
      responseStream: false,
      requestSerialize: (b: Buffer) => b,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (b: Buffer) => b,
      responseDeserialize: (b: Buffer) => b,
    },
  },
  'TraceService',
);

/** A valid ExportTraceServiceRequest of about `bytes`: one unknown length-delimited field, which decoders skip. */
function paddedRequest(bytes: number): Buffer {
  const n = bytes - 6;
  const head = Buffer.from([0x7a, 0x80 | (n & 0x7f), 0x80 | ((n >> 7) & 0x7f), 0x80 | ((n >> 14) & 0x7f), (n >> 21) & 0x7f]);
  return Buffer.concat([head, Buffer.alloc(n)]);
}

test('gRPC: 40 concurrent 15 MiB messages stay within the bytes-in-flight budget; the refused ones get UNAVAILABLE with retry info', async (t) => {
  // A 16 MiB budget admits one 15 MiB message at a time (a lone message is always admitted).
  const d = await detector(['--max-in-flight-bytes', String(16 * MiB), '--max-body-bytes', String(16 * MiB), '--max-decompressed-bytes', String(32 * MiB)]);
  const pid = d.child.pid!;
  const before = rssOf(pid);
  const body = paddedRequest(15 * MiB);
  const clients = Array.from({ length: 40 }, () =>
    new RawClient(d.otlpGrpcAddress, credentials.createInsecure(), { 'grpc.max_send_message_length': 64 * MiB, 'grpc.max_receive_message_length': 64 * MiB }),
  );
  let peak = before.rss;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid).rss)), 50);
  try {
    const answers = await Promise.all(
      clients.map(
        (c) =>
          new Promise<ServiceError | null>((resolve) => {
            (c as unknown as { Export: Function }).Export(body, new Metadata(), { deadline: Date.now() + 45_000 }, (err: ServiceError | null) => resolve(err));
          }),
      ),
    );
    const after = rssOf(pid);
    peak = Math.max(peak, after.rss, after.hwm);
    // grpc-js buffered every message before any check: +850 MiB. Now one 15 MiB message (and
    // its decode) at a time, plus HTTP/2 windows and the client-side noise of a loaded machine.
    const grew = peak - before.rss;
    t.diagnostic(`detector RSS ${Math.round(before.rss / MiB)} MiB -> peak ${Math.round(peak / MiB)} MiB`);
    assert.ok(grew < 200 * MiB, `detector RSS grew by ${Math.round(grew / MiB)} MiB (from ${Math.round(before.rss / MiB)} MiB)`);
    const refused = answers.filter((e) => e?.code === 14 && /FORKWATCH_ERR_INGEST_BUDGET/.test(e.details));
    const ok = answers.filter((e) => e === null);
    assert.ok(refused.length >= 20, `expected most calls refused over the budget: ${answers.map((e) => e?.code ?? 0).join(',')}`);
    assert.ok(ok.length >= 1, 'no call got through');
    for (const e of refused) assert.equal(e!.metadata.get('grpc-status-details-bin').length, 1, 'budget refusal without RetryInfo');
  } finally {
    clearInterval(sampler);
    for (const c of clients) c.close();
  }
});

interface RawSession {
  session: ClientHttp2Session;
  /** The server's SETTINGS arrived: the connection was accepted. */
  accepted: boolean;
  closed: boolean;
}

function openRaw(address: string, pingEveryMs?: number): Promise<RawSession> {
  return new Promise((resolve) => {
    const session = connect(`http://${address}`);
    const s: RawSession = { session, accepted: false, closed: false };
    let timer: NodeJS.Timeout | undefined;
    session.on('error', () => undefined);
    session.once('remoteSettings', () => {
      s.accepted = true;
      if (pingEveryMs !== undefined) timer = setInterval(() => session.ping(() => undefined), pingEveryMs);
      resolve(s);
    });
    session.once('close', () => {
      s.closed = true;
      if (timer) clearInterval(timer);
      resolve(s);
    });
  });
}

test('gRPC: past --max-connections new connections are closed on accept', async () => {
  const d = await detector(['--max-connections', '20']);
  const sessions: RawSession[] = [];
  cleanup.push(async () => sessions.forEach((s) => s.session.destroy()));
  for (let i = 0; i < 60; i++) sessions.push(await openRaw(d.otlpGrpcAddress));
  const open = sessions.filter((s) => s.accepted && !s.closed).length;
  assert.ok(open <= 20, `${open} connections open past --max-connections 20`);
  assert.ok(open >= 10, `only ${open} connections accepted`);
});

test('gRPC: stalled calls time out (DEADLINE_EXCEEDED) and idle connections are closed, PINGs or not', async () => {
  const d = await detector(['--request-timeout-ms', '1500', '--grpc-idle-timeout-ms', '2000']);
  const idle: RawSession[] = [];
  const stalled: RawSession[] = [];
  cleanup.push(async () => [...idle, ...stalled].forEach((s) => s.session.destroy()));
  for (let i = 0; i < 30; i++) idle.push(await openRaw(d.otlpGrpcAddress, i % 2 === 0 ? 300 : undefined));
  const statuses: Array<string | undefined> = [];
  let streamsClosed = 0;
  for (let i = 0; i < 20; i++) {
    const s = await openRaw(d.otlpGrpcAddress);
    stalled.push(s);
    const stream = s.session.request({
      [constants.HTTP2_HEADER_METHOD]: 'POST',
      [constants.HTTP2_HEADER_PATH]: EXPORT_PATH,
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    stream.on('error', () => undefined);
    stream.on('response', (h) => h['grpc-status'] !== undefined && statuses.push(String(h['grpc-status'])));
    stream.on('trailers', (h) => statuses.push(h['grpc-status'] as string | undefined));
    stream.on('close', () => streamsClosed++);
    stream.resume();
    // Half of them announce 1,000 bytes and send 10; the rest send nothing after their headers.
    if (i % 2 === 0) stream.write(Buffer.concat([Buffer.from([0, 0, 0, 0x03, 0xe8]), Buffer.alloc(10)]));
  }
  const all = [...idle, ...stalled];
  assert.equal(all.filter((s) => s.accepted).length, 50, 'every connection accepted');
  await waitFor(() => streamsClosed === 20, 20_000, 100, () => `${streamsClosed} of 20 stalled calls ended; statuses ${statuses.join(',')}`);
  assert.deepEqual(statuses, Array(20).fill('4'), 'each stalled call is answered DEADLINE_EXCEEDED');
  await waitFor(() => all.every((s) => s.closed), 20_000, 100, () => `${all.filter((s) => !s.closed).length} of ${all.length} connections still open`);
  // The port still serves.
  const client = new RawClient(d.otlpGrpcAddress, credentials.createInsecure());
  try {
    const err = await new Promise<ServiceError | null>((resolve) =>
      (client as unknown as { Export: Function }).Export(paddedRequest(1024), new Metadata(), { deadline: Date.now() + 10_000 }, resolve),
    );
    assert.equal(err, null);
  } finally {
    client.close();
  }
});
