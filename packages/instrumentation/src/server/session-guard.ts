import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createError } from '../errors.js';
import { HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, HEADER_SESSION_INCARNATION, META_INCARNATION } from '../semconv.js';
import { newIncarnation } from '../common/incarnation.js';
import { componentLogger } from '../common/logger.js';
import { DEFAULT_MAX_BYTES_PER_SESSION, DEFAULT_MAX_EVENTS_PER_SESSION, GuardedEventStore } from './guarded-event-store.js';
import { guardLinks } from './guard-link.js';
import { readJsonBody } from './read-json-body.js';
import { contextOf, headerValue } from './request-context.js';
import type { SessionEndReason, SessionGuard, SessionGuardOptions, SessionGuardStats } from './types.js';
import { writeJsonRpcError } from './write-jsonrpc-error.js';

/** Default of `idleTtlMs`: 30 minutes. */
export const DEFAULT_IDLE_TTL_MS = 30 * 60 * 1000;
/** Default of `maxSessions`. */
export const DEFAULT_MAX_SESSIONS = 10_000;
/** Default of `maxBodyBytes`: 4 MiB, as the SDK's transport. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Upper bound of the default reaper period, ms. */
export const DEFAULT_MAX_REAP_INTERVAL_MS = 60_000;

/** JSON-RPC code of an unknown session (the SDK's). */
export const JSONRPC_SESSION_NOT_FOUND = -32001;
/** JSON-RPC code of a `Last-Event-ID` absent from a known session's log (forkwatch's). */
export const JSONRPC_EVENT_NOT_IN_LOG = -32002;

interface SessionEntry {
  id: string;
  incarnation: string;
  transport: StreamableHTTPServerTransport;
  server: McpServer | Server;
  store: GuardedEventStore;
  lastSeenMs: number;
}

function validate(o: SessionGuardOptions): void {
  const problems: string[] = [];
  const positive = (name: keyof SessionGuardOptions, allowZero = false): void => {
    const v = o[name];
    if (v === undefined) return;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (!allowZero && v === 0)) problems.push(`${name} must be a ${allowZero ? 'non-negative' : 'positive'} number, got ${String(v)}`);
  };
  if (typeof o.createServer !== 'function') problems.push('createServer must be a function');
  positive('idleTtlMs');
  positive('maxSessions');
  positive('maxEventsPerSession');
  positive('maxBytesPerSession');
  positive('maxBodyBytes');
  positive('reapIntervalMs', true);
  if (problems.length > 0) throw createError('FORKWATCH_ERR_CONFIG_INVALID', problems.join('; '));
}

function isInitialize(m: unknown): m is { method: 'initialize'; id: string | number } {
  if (!m || typeof m !== 'object') return false;
  const r = m as Record<string, unknown>;
  return r.method === 'initialize' && (typeof r.id === 'string' || typeof r.id === 'number');
}

/**
 * Creates a session guard: the registry of sessions and their event logs as one structure, and
 * the resume decision boundary. Unknown session -> 404/-32001, allocating nothing; known session
 * with a `Last-Event-ID` not in its log -> 409/-32002 with `data.reason`; otherwise the SDK
 * transport replays after the event. Throws FORKWATCH_ERR_CONFIG_INVALID on bad options.
 */
export function createSessionGuard(options: SessionGuardOptions): SessionGuard {
  validate(options);
  const logger = componentLogger('guard');
  const idleTtlMs = options.idleTtlMs ?? DEFAULT_IDLE_TTL_MS;
  const maxSessions = Math.floor(options.maxSessions ?? DEFAULT_MAX_SESSIONS);
  const maxEvents = Math.floor(options.maxEventsPerSession ?? DEFAULT_MAX_EVENTS_PER_SESSION);
  const maxBytes = options.maxBytesPerSession ?? DEFAULT_MAX_BYTES_PER_SESSION;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const generateId = options.sessionIdGenerator ?? randomUUID;
  const now = options.now ?? Date.now;
  const instrumentation = options.instrumentation;
  const reapIntervalMs = options.reapIntervalMs ?? Math.min(idleTtlMs, DEFAULT_MAX_REAP_INTERVAL_MS);

  /** Insertion order = least recently used first (touch re-inserts), so reaping stops early. */
  const sessions = new Map<string, SessionEntry>();
  /** Ids handed to transports still initializing: never reused. */
  const pending = new Set<string>();
  const counters = { created: 0, reapedIdle: 0, evictedCapacity: 0, closed: 0, rejectedUnknownSession: 0, rejectedEventAbsent: 0 };
  let closed = false;

  const closeQuietly = (entry: Pick<SessionEntry, 'server' | 'transport'>): Promise<void> =>
    entry.server.close().catch((err: unknown) => logger.debug('server close failed', err));

  /** Removes a session and its log together; the transport is closed afterwards. */
  const evict = (entry: SessionEntry, reason: SessionEndReason): Promise<void> => {
    if (sessions.get(entry.id) !== entry) return Promise.resolve();
    sessions.delete(entry.id);
    const dropped = entry.store.clear();
    if (reason === 'reaped_idle') counters.reapedIdle++;
    else if (reason === 'evicted_capacity') counters.evictedCapacity++;
    else counters.closed++;
    instrumentation?.markEnded(entry.transport, reason, dropped);
    return closeQuietly(entry);
  };

  const touch = (entry: SessionEntry): void => {
    entry.lastSeenMs = now();
    sessions.delete(entry.id);
    sessions.set(entry.id, entry);
  };

  const reap = (): number => {
    const cutoff = now() - idleTtlMs;
    let n = 0;
    for (const entry of sessions.values()) {
      if (entry.lastSeenMs > cutoff) break;
      void evict(entry, 'reaped_idle');
      n++;
    }
    return n;
  };

  const timer = reapIntervalMs > 0 ? setInterval(reap, reapIntervalMs) : undefined;
  timer?.unref();

  const createSession = async (req: IncomingMessage, res: ServerResponse, parsedBody: unknown): Promise<void> => {
    let body = parsedBody;
    if (body === undefined) {
      const read = await readJsonBody(req, maxBodyBytes);
      if (!read.ok) {
        if (read.reason === 'too_large') writeJsonRpcError(res, 413, -32000, `Payload Too Large: request body exceeds ${maxBodyBytes} bytes`);
        else if (read.reason === 'invalid_json') writeJsonRpcError(res, 400, -32700, 'Parse error: Invalid JSON');
        else if (!res.writableEnded) res.end();
        return;
      }
      body = read.value;
    }
    const init = (Array.isArray(body) ? body : [body]).find(isInitialize);
    if (!init) {
      writeJsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      return;
    }
    if (closed) {
      writeJsonRpcError(res, 503, -32000, 'Server shutting down');
      return;
    }
    const id = generateId();
    if (sessions.has(id) || pending.has(id)) {
      // Reusing a live id would graft a new incarnation onto another client's session.
      logger.error('sessionIdGenerator returned a live session id; refusing to reuse it');
      writeJsonRpcError(res, 500, -32603, 'Internal error: session id collision');
      return;
    }
    while (sessions.size >= maxSessions) {
      const lru = sessions.values().next();
      if (lru.done) break;
      void evict(lru.value, 'evicted_capacity');
    }
    const incarnation = newIncarnation();
    const store = new GuardedEventStore(incarnation, { maxEvents, maxBytes });
    let entry: SessionEntry | undefined;
    let server: McpServer | Server | undefined;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      eventStore: store,
      enableJsonResponse: options.enableJsonResponse ?? false,
      onsessioninitialized: () => {
        if (!server) return;
        entry = { id, incarnation, transport, server, store, lastSeenMs: now() };
        sessions.set(id, entry);
        counters.created++;
      },
    });
    guardLinks.set(transport, {
      incarnation,
      lookup: (eventId) => store.lookup(eventId),
      streamIdOf: (eventId) => store.streamIdOf(eventId),
    });
    // The InitializeResult carries the incarnation so clients need not read headers.
    const origSend = transport.send.bind(transport);
    let metaAdded = false;
    transport.send = (message: JSONRPCMessage, opts?: Parameters<StreamableHTTPServerTransport['send']>[1]) => {
      if (!metaAdded && 'result' in message && message.id === init.id) {
        metaAdded = true;
        const result = message.result as Record<string, unknown>;
        const meta = result._meta && typeof result._meta === 'object' ? (result._meta as Record<string, unknown>) : {};
        message = { ...message, result: { ...result, _meta: { ...meta, [META_INCARNATION]: incarnation } } };
      }
      return origSend(message, opts);
    };
    transport.onclose = () => {
      // The transport closed by itself (DELETE, an error): drop the session with its log.
      if (entry && sessions.get(id) === entry) {
        sessions.delete(id);
        entry.store.clear();
        counters.closed++;
      }
    };
    instrumentation?.observeTransport(transport);
    pending.add(id);
    try {
      server = options.createServer();
      await server.connect(transport);
      res.setHeader(HEADER_SESSION_INCARNATION, incarnation);
      await transport.handleRequest(req, res, body);
    } finally {
      pending.delete(id);
      if (!entry) {
        // Initialization failed: nothing was registered, release what was built.
        store.clear();
        if (server) await closeQuietly({ server, transport });
        else await transport.close().catch(() => undefined);
      }
    }
  };

  const route = async (req: IncomingMessage, res: ServerResponse, parsedBody: unknown): Promise<void> => {
    const method = (req.method ?? '').toUpperCase();
    const sessionId = headerValue(req, HEADER_SESSION_ID);
    if (sessionId === undefined) {
      if (method === 'POST') return createSession(req, res, parsedBody);
      if (method === 'GET' || method === 'DELETE') {
        writeJsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
        return;
      }
      writeJsonRpcError(res, 405, -32000, 'Method not allowed.', undefined, { Allow: 'GET, POST, DELETE' });
      return;
    }
    const entry = sessions.get(sessionId);
    if (!entry) {
      // Never a minted replacement: the client must initialize afresh.
      counters.rejectedUnknownSession++;
      const ctx = contextOf(req);
      if (ctx) ctx.guard = {};
      writeJsonRpcError(res, 404, JSONRPC_SESSION_NOT_FOUND, 'Session not found');
      return;
    }
    touch(entry);
    res.setHeader(HEADER_SESSION_INCARNATION, entry.incarnation);
    const lastEventId = headerValue(req, HEADER_LAST_EVENT_ID);
    // Only GET resumes in the SDK; a Last-Event-ID on other methods is ignored there too.
    if (method === 'GET' && lastEventId !== undefined) {
      const l = entry.store.lookup(lastEventId);
      if (!l.found) {
        counters.rejectedEventAbsent++;
        const ctx = contextOf(req);
        if (ctx) ctx.guard = { incarnation: entry.incarnation, lastEventFound: false };
        writeJsonRpcError(res, 409, JSONRPC_EVENT_NOT_IN_LOG, 'Event not in session log', { reason: l.reason });
        return;
      }
    }
    await entry.transport.handleRequest(req, res, parsedBody);
  };

  const guarded = async (req: IncomingMessage, res: ServerResponse, parsedBody?: unknown): Promise<void> => {
    try {
      await route(req, res, parsedBody);
    } catch (err) {
      logger.error('session guard failed to handle a request', err);
      try {
        writeJsonRpcError(res, 500, -32603, 'Internal error');
      } catch {
        // the response is beyond repair
      }
    }
  };
  const handleRequest = instrumentation ? instrumentation.wrapHandler(guarded) : guarded;

  return {
    handleRequest: (req, res, parsedBody) => handleRequest(req, res, parsedBody) as Promise<void>,
    reap,
    async close() {
      closed = true;
      if (timer) clearInterval(timer);
      await Promise.all([...sessions.values()].map((e) => evict(e, 'server_shutdown')));
    },
    stats(): SessionGuardStats {
      let events = 0;
      for (const e of sessions.values()) events += e.store.size;
      return { sessions: sessions.size, events, ...counters };
    },
    incarnationOf(sessionId) {
      return sessions.get(sessionId)?.incarnation;
    },
  };
}
