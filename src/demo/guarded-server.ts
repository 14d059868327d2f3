import type { ServerInstrumentation } from '@forkwatch/instrumentation/server';
import { SERVER_SDK_V1, type ServerSdkKit } from './sdk-kit.js';
import { readJsonBody, sendJsonRpcError } from './http-body.js';
import { recordStatus } from './record-status.js';
import { listenLoopback } from './listen-loopback.js';
import type { DemoServer } from './types.js';
import { createServerObserver } from './server-observer.js';

export interface GuardedServerOptions {
  /** The guard's `idleTtlMs`: a session with no request for this long is reaped with its log, ms. Default 300. */
  reapAfterMs?: number;
  /** The guard's reaper period, ms. Default reapAfterMs / 6 (at least 10). */
  reapIntervalMs?: number;
  /** slow_report progress notifications per call. Default 5. */
  steps?: number;
  /** slow_report delay per step, ms. Default 30. */
  stepMs?: number;
  /** Optional forkwatch server instrumentation given to the guard. Default none. */
  instrumentation?: ServerInstrumentation;
  /** Largest POST body read, bytes. Default 4 MiB. */
  maxBodyBytes?: number;
  /** The guard's `maxEventsPerSession` (a small log makes a late resume's cursor evicted: 409). Default the guard's. */
  maxEventsPerSession?: number;
  /** Narration of server-side moments (session created, reaped, resume refused). Errors are ignored. */
  onNote?: (what: string) => void;
  /** The server SDK. Default 1.x. */
  sdk?: ServerSdkKit;
}

/**
 * The same slow tool behind forkwatch's `createSessionGuard`: sessions and their logs live and
 * die together, an unknown session on resume is answered 404, an absent event 409, and nothing is
 * ever minted on a resume.
 */
export async function startGuardedServer(opts: GuardedServerOptions = {}): Promise<DemoServer> {
  const reapAfterMs = opts.reapAfterMs ?? 300;
  const { obs, note, onRun } = createServerObserver(opts.onNote);
  const sdk = opts.sdk ?? SERVER_SDK_V1;
  const guard = sdk.createSessionGuard({
    createServer: () => sdk.createApp({ steps: opts.steps, stepMs: opts.stepMs, onRun }),
    idleTtlMs: reapAfterMs,
    reapIntervalMs: opts.reapIntervalMs ?? Math.max(10, Math.floor(reapAfterMs / 6)),
    instrumentation: opts.instrumentation,
    maxBodyBytes: opts.maxBodyBytes,
    ...(opts.maxEventsPerSession !== undefined ? { maxEventsPerSession: opts.maxEventsPerSession } : {}),
  });
  // The guard reports reaps only as counters: narrate them by watching the counter.
  let reapedSeen = 0;
  const watch = setInterval(() => {
    const n = guard.stats().reapedIdle;
    if (n > reapedSeen) {
      note(`guard reaped ${n - reapedSeen} idle session(s) together with their event logs`);
      reapedSeen = n;
    }
  }, Math.max(10, Math.floor(reapAfterMs / 6)));
  watch.unref();

  const { server, port } = await listenLoopback(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const sid = req.headers['mcp-session-id'] as string | undefined;
    const lastEventId = req.headers['last-event-id'] as string | undefined;
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readJsonBody(req, opts.maxBodyBytes);
      if (!read.ok) {
        sendJsonRpcError(res, read.status, -32700, read.reason);
        return;
      }
      body = read.value;
    }
    const initialize = req.method === 'POST' && !sid && (Array.isArray(body) ? body : [body]).some((m) => sdk.isInitializeRequest(m));
    recordStatus(res, (status) => {
      const answeredId = res.getHeader('mcp-session-id');
      obs.answered.push({ method: req.method ?? '', sessionId: sid, lastEventId, status, at: Date.now() });
      if (initialize && status === 200 && typeof answeredId === 'string') {
        obs.created.push({ sessionId: answeredId, life: 1, by: 'initialize', method: 'initialize', at: Date.now() });
        note(`guard created session ${answeredId.slice(0, 8)}… on initialize (incarnation ${guard.incarnationOf(answeredId) ?? '?'})`);
      }
      if (lastEventId !== undefined && status >= 400) note(`guard refused resume (Last-Event-ID ${lastEventId}): ${status}, nothing allocated`);
    });
    await guard.handleRequest(req, res, body);
  });

  return {
    kind: 'guarded',
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    observations: obs,
    activeSessions: () => guard.stats().sessions,
    reapedCount: () => guard.stats().reapedIdle,
    async close() {
      clearInterval(watch);
      await guard.close().catch(() => {});
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
