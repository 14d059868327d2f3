/**
 * Plumbing of the sessions benchmark: `forkwatch serve` from dist/ as its own process (a temp
 * SQLite file), and OTLP senders over a fixed number of real connections: HTTP/1.1 protobuf
 * through a keep-alive agent of `connections` sockets, and gRPC over `connections` node:http2
 * sessions (one `TraceService/Export` call at a time per sender, as an exporter sends).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, type ClientHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TRACE_EXPORT_PATH } from '../src/otlp/grpc/otlp-grpc-server.js';

export interface ServeProc {
  otlpUrl: string;
  httpUrl: string;
  grpc: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `node dist/cli/bin.js serve` (or the `cli` given: another build's bin.js, to compare) on
 * ephemeral ports with a temp database and `args`; resolves once it listens.
 */
export async function startServe(args: string[], nodeArgs: string[] = [], cli = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url))): Promise<ServeProc> {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-bench-sessions-'));
  const child = spawn(
    process.execPath,
    [...nodeArgs, cli, 'serve', '--host', '127.0.0.1', '--otlp-port', '0', '--otlp-grpc-port', '0', '--http-port', '0', '--log-level', 'error', '--db', join(dir, 'fw.db'), ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const m = await new Promise<RegExpExecArray>((resolve, reject) => {
    let out = '';
    const onData = (d: string): void => {
      out += d;
      const hit = /forkwatch listening otlp=(\S+) http=(\S+) otlp-grpc=(\S+)/.exec(out);
      if (hit) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve(hit);
      }
    };
    child.stdout!.setEncoding('utf8').on('data', onData);
    child.once('exit', (code) => reject(new Error(`forkwatch serve exited with ${code}`)));
  });
  return {
    otlpUrl: m[1]!,
    httpUrl: m[2]!,
    grpc: m[3]!,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        const done = (): void => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        };
        if (child.exitCode !== null) return done();
        child.once('exit', done);
        child.kill('SIGTERM');
      }),
  };
}

/** Sends one body on the sender's own connection; resolves once acknowledged (retrying overload answers). */
export type ConnSender = (body: Uint8Array) => Promise<void>;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * What a set of senders was refused: answers of 503 / 429 (gRPC UNAVAILABLE / RESOURCE_EXHAUSTED),
 * each retried after 100 ms as an exporter would (later, with backoff).
 */
export interface Refusals {
  count: number;
}

/** `connections` OTLP/HTTP protobuf senders sharing a keep-alive agent of that many sockets. */
export function httpConnSenders(otlpUrl: string, connections: number): { senders: ConnSender[]; refusals: Refusals; close(): void } {
  const refusals: Refusals = { count: 0 };
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const url = new URL(`${otlpUrl}/v1/traces`);
  const once = (body: Uint8Array): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/x-protobuf', 'content-length': body.byteLength } }, (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
    });
  const send: ConnSender = async (body) => {
    for (;;) {
      const status = await once(body);
      if (status === 200) return;
      if (status !== 503 && status !== 429) throw new Error(`HTTP ${status}`);
      refusals.count++;
      await sleep(100);
    }
  };
  return { senders: Array.from({ length: connections }, () => send), refusals, close: () => agent.destroy() };
}

/**
 * `connections` OTLP/gRPC senders, each on an HTTP/2 connection of its own, reconnecting as an
 * exporter does when the detector closed it (its idle timeout's GOAWAY while a pass was deciding).
 */
export function grpcConnSenders(address: string, connections: number): { senders: ConnSender[]; refusals: Refusals; close(): void } {
  const refusals: Refusals = { count: 0 };
  const open = (): ClientHttp2Session => connect(`http://${address}`).on('error', () => undefined);
  const sessions: ClientHttp2Session[] = Array.from({ length: connections }, open);
  const once = (s: ClientHttp2Session, body: Uint8Array): Promise<string> =>
    new Promise((resolve, reject) => {
      const req = s.request({ ':method': 'POST', ':path': TRACE_EXPORT_PATH, 'content-type': 'application/grpc', te: 'trailers' });
      let status = '';
      req.on('response', (h) => {
        if (h['grpc-status'] !== undefined) status = String(h['grpc-status']);
      });
      req.on('trailers', (t) => {
        status = String(t['grpc-status'] ?? '');
      });
      req.on('data', () => undefined);
      req.on('end', () => resolve(status));
      req.on('error', reject);
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(body.byteLength, 1);
      req.write(prefix);
      req.end(body);
    });
  const senders = sessions.map((_, k): ConnSender => async (body) => {
    for (let reconnects = 0; ; ) {
      let s = sessions[k]!;
      if (s.closed || s.destroyed) s = sessions[k] = open();
      let status: string;
      try {
        status = await once(s, body);
      } catch (err) {
        // A connection closed under the call (GOAWAY, reset): a new one, a few times at most.
        if (++reconnects > 3) throw err;
        s.destroy();
        continue;
      }
      if (status === '0') return;
      if (status !== '14' && status !== '8') throw new Error(`grpc-status ${status}`);
      refusals.count++;
      await sleep(100);
    }
  });
  return { senders, refusals, close: () => sessions.forEach((s) => s.close()) };
}

/** Sends `bodies()` closed-loop, every sender one request at a time, until `count` bodies were sent; resolves the seconds taken. */
export async function sendClosedLoop(senders: ConnSender[], count: number, body: (i: number) => Uint8Array): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    senders.map(async (send) => {
      while (next < count) await send(body(next++));
    }),
  );
  return (performance.now() - t0) / 1000;
}

/**
 * Sends open-loop at `bodiesPerSec` for `seconds`, spreading requests over the senders (a sender
 * busy with its previous request queues the next behind it); resolves the bodies sent.
 */
export async function sendPaced(senders: ConnSender[], bodiesPerSec: number, seconds: number, body: (i: number) => Uint8Array): Promise<number> {
  const t0 = performance.now();
  const chains: Promise<void>[] = senders.map(() => Promise.resolve());
  let sent = 0;
  while (performance.now() - t0 < seconds * 1000) {
    const due = t0 + (sent / bodiesPerSec) * 1000;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const i = sent++;
    const k = i % senders.length;
    const b = body(i);
    chains[k] = chains[k]!.then(() => senders[k]!(b));
  }
  await Promise.all(chains);
  return sent;
}
