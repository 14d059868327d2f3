import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SERVER_SDK_V1, type DemoApp, type ServerSdkKit } from './sdk-kit.js';
import { CounterEventStore } from './counter-event-store.js';
import { readJsonBody, sendJsonRpcError } from './http-body.js';
import { recordStatus } from './record-status.js';
import { listenLoopback } from './listen-loopback.js';
import type { ServerInstrumentation } from '@forkwatch/instrumentation/server';
import type { DemoServer } from './types.js';
import { createServerObserver } from './server-observer.js';

export interface NaiveServerOptions {
  /** A session idle this long (no request, no event stored) is reaped with its event log, ms. Default 300. */
  reapAfterMs?: number;
  /** slow_report progress notifications per call. Default 5. */
  steps?: number;
  /** slow_report delay per step, ms. Default 30. */
  stepMs?: number;
  /**
   * Rebuild a transport under the client-supplied id when a GET or POST names an unknown session
   * (the rehydration pattern that causes the fork). Default true; false answers 404 as the SDK does.
   */
  rehydrate?: boolean;
  /** Optional forkwatch server instrumentation (observeTransport, wrapHandler, markEnded). Default none. */
  instrumentation?: ServerInstrumentation;
  /** Largest POST body read, bytes. Default 4 MiB. */
  maxBodyBytes?: number;
  /** Narration of server-side moments (session created, rehydrated, reaped). Errors are ignored. */
  onNote?: (what: string) => void;
  /** The server SDK. Default 1.x. */
  sdk?: ServerSdkKit;
}

interface Session {
  id: string;
  life: number;
  transport: StreamableHTTPServerTransport;
  app: DemoApp;
  store: CounterEventStore;
  timer?: NodeJS.Timeout;
  ended: boolean;
}

/**
 * The seed's server, with real SDK parts: an McpServer per session routed by the common
 * `transports[sessionId]` map on a node:http server, a per-transport counter event store, an idle
 * reaper that drops a session with its log, and the naive rehydration that rebuilds a transport
 * under a client-supplied id (fresh store, marked initialized) instead of answering 404.
 */
export async function startNaiveServer(opts: NaiveServerOptions = {}): Promise<DemoServer> {
  const reapAfterMs = opts.reapAfterMs ?? 300;
  const rehydrate = opts.rehydrate ?? true;
  const instr = opts.instrumentation;
  const sdk = opts.sdk ?? SERVER_SDK_V1;
  const sessions = new Map<string, Session>();
  const lives = new Map<string, number>();
  const rehydrating = new Map<string, Promise<Session>>();
  const { obs, note, onRun } = createServerObserver(opts.onNote);

  const arm = (s: Session): void => {
    if (s.ended) return;
    if (s.timer) clearTimeout(s.timer);
    s.timer = setTimeout(() => void reap(s), reapAfterMs);
    s.timer.unref();
  };

  const reap = async (s: Session): Promise<void> => {
    if (s.ended) return;
    s.ended = true;
    if (sessions.get(s.id) === s) sessions.delete(s.id);
    obs.reaped.push({ sessionId: s.id, life: s.life, eventsEvicted: s.store.size, at: Date.now() });
    note(`server reaped idle session ${short(s.id)} (life ${s.life}) and its ${s.store.size} events`);
    try {
      instr?.markEnded(s.transport, 'reaped_idle', s.store.size);
    } catch {
      // instrumentation must never break the app
    }
    await s.transport.close().catch(() => {});
  };

  /** A new session: `id` undefined mints one on initialize; a string rebuilds under that id. */
  const newSession = async (id: string | undefined, cause: { method: string; lastEventId?: string }): Promise<Session> => {
    const holder: { s?: Session } = {};
    const store = new CounterEventStore(() => {
      if (holder.s) arm(holder.s);
    });
    const transport = sdk.createTransport({
      sessionIdGenerator: id === undefined ? () => randomUUID() : () => id,
      eventStore: store,
      onsessioninitialized: (sid) => {
        const s = holder.s!;
        s.id = sid;
        s.life = (lives.get(sid) ?? 0) + 1;
        lives.set(sid, s.life);
        sessions.set(sid, s);
        obs.created.push({ sessionId: sid, life: s.life, by: 'initialize', method: 'initialize', at: Date.now() });
        note(`server created session ${short(sid)} on initialize`);
        arm(s);
      },
    });
    const life = id === undefined ? 1 : (lives.get(id) ?? 0) + 1;
    const app = sdk.createApp({ steps: opts.steps, stepMs: opts.stepMs, onRun, life });
    const s: Session = { id: id ?? '', life, transport, app, store, ended: false };
    holder.s = s;
    transport.onclose = () => {
      s.ended = true;
      if (s.timer) clearTimeout(s.timer);
      if (sessions.get(s.id) === s) sessions.delete(s.id);
    };
    try {
      instr?.observeTransport(transport);
    } catch {
      // instrumentation must never break the app
    }
    await app.connect(transport as never);
    if (id !== undefined) {
      // The rehydration pattern: adopt the client's id and skip the initialize handshake, so the
      // SDK's own session check passes. This is the fork: a new life under an old name.
      const inner = (transport as unknown as { _webStandardTransport: { sessionId?: string; _initialized: boolean } })
        ._webStandardTransport;
      inner.sessionId = id;
      inner._initialized = true;
      lives.set(id, life);
      sessions.set(id, s);
      obs.created.push({ sessionId: id, life, by: 'rehydrate', method: cause.method, lastEventId: cause.lastEventId, at: Date.now() });
      note(
        `server REHYDRATED unknown session ${short(id)} on ${cause.method}` +
          `${cause.lastEventId ? ` (Last-Event-ID ${cause.lastEventId})` : ''}: life ${life}, fresh event log from e1`,
      );
      arm(s);
    }
    return s;
  };

  const handler = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const sid = headerValue(req.headers['mcp-session-id']);
    const lastEventId = headerValue(req.headers['last-event-id']);
    recordStatus(res, (status) =>
      obs.answered.push({ method: req.method ?? '', sessionId: sid, lastEventId, status, at: Date.now() }),
    );
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readJsonBody(req, opts.maxBodyBytes);
      if (!read.ok) {
        sendJsonRpcError(res, read.status, -32700, read.reason);
        return;
      }
      body = read.value;
    }
    let s = sid ? sessions.get(sid) : undefined;
    if (!s) {
      if (!sid) {
        if (req.method !== 'POST' || !sdk.isInitializeRequest(body)) {
          sendJsonRpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');
          return;
        }
        s = await newSession(undefined, { method: 'initialize' });
      } else if (rehydrate && (req.method === 'GET' || req.method === 'POST')) {
        // Concurrent requests for one unknown id (the SDK reconnects its GET and POST streams
        // together) share one rehydration, as an app's per-id lock would make them.
        let p = rehydrating.get(sid);
        if (!p) {
          p = newSession(sid, { method: methodOf(req.method, body), lastEventId });
          rehydrating.set(sid, p);
          void p.finally(() => rehydrating.delete(sid)).catch(() => {});
        }
        s = await p;
      } else {
        sendJsonRpcError(res, 404, -32001, 'Session not found');
        return;
      }
    }
    arm(s);
    await s.transport.handleRequest(req, res, body);
  };

  const wrapped = instr ? instr.wrapHandler(handler) : handler;
  const { server, port } = await listenLoopback(wrapped);

  return {
    kind: 'naive',
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    observations: obs,
    activeSessions: () => sessions.size,
    reapedCount: () => obs.reaped.length,
    async close() {
      for (const s of [...sessions.values()]) {
        s.ended = true;
        if (s.timer) clearTimeout(s.timer);
        await s.transport.close().catch(() => {});
      }
      sessions.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Enough of a session id to tell sessions apart in narration, not enough to use it. */
function short(id: string): string {
  return `${id.slice(0, 8)}…`;
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** JSON-RPC method of a POST body (first message of a batch), or the HTTP method for GET. */
function methodOf(httpMethod: string, body: unknown): string {
  const first = Array.isArray(body) ? body[0] : body;
  if (first && typeof first === 'object' && typeof (first as { method?: unknown }).method === 'string') {
    return (first as { method: string }).method;
  }
  return httpMethod;
}
