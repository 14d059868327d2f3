import type { ClientRequest } from 'node:http';
import type { Deadline, Deadlines } from './deadlines.js';

/** The two bounds on reaching the upstream, and which one ended the request (undefined: neither). */
export interface UpstreamTimeouts {
  /** `connect`: no connection within `--connect-timeout-ms` (502); `headers`: no status line within `--headers-timeout-ms` (504). */
  failure: 'connect' | 'headers' | undefined;
  /** The status-line deadline: cancelled once the answer's head came or the exchange ended. */
  readonly headers: Deadline;
}

/**
 * Bounds an upstream request: its connection (when a new socket must connect) and its status
 * line. Either, when due, destroys the request (its `error` handler answers the client `502` or
 * `504` by `failure`). The deadlines are the proxy's shared ones (deadlines.ts), not Node timers.
 */
export function upstreamTimeouts(deadlines: Deadlines, upstream: ClientRequest, connectMs: number, headersMs: number): UpstreamTimeouts {
  const t: { failure: UpstreamTimeouts['failure']; headers?: Deadline } = { failure: undefined };
  t.headers = deadlines.add(
    headersMs,
    () => {
      t.failure = 'headers';
      upstream.destroy(new Error('upstream sent no status line in time'));
    },
    undefined,
  );
  upstream.on('socket', (sock) => {
    if (!sock.connecting) return;
    const c = deadlines.add(
      connectMs,
      () => {
        t.failure = 'connect';
        upstream.destroy(new Error('upstream connect timed out'));
      },
      undefined,
    );
    sock.once('connect', () => c.cancel());
    sock.once('close', () => c.cancel());
  });
  return t as UpstreamTimeouts;
}
