import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, propagation, type Context } from '@opentelemetry/api';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_JSONRPC_KIND,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_PROGRESS_TOKEN,
  ATTR_RESUME_LAST_EVENT_FOUND,
  ATTR_RESUME_LAST_EVENT_ID,
  ATTR_RESUME_OUTCOME,
  ATTR_SESSION_CLIENT_SUPPLIED_ID,
  ATTR_SESSION_CREATED_BY,
  ATTR_SESSION_END_REASON,
  ATTR_SESSION_EVENTS_EVICTED,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  ATTR_SSE_EVENT_ID,
  ATTR_SSE_EVENT_SEQ,
  ATTR_SSE_EVENT_SEQ_SOURCE,
  ATTR_SSE_PAYLOAD_BYTES,
  ATTR_SSE_PAYLOAD_DIGEST,
  ATTR_SSE_REPLAYED,
  ATTR_SSE_STREAM_ID,
  HEADER_LAST_EVENT_ID,
  HEADER_PROTOCOL_VERSION,
  HEADER_SESSION_ID,
  HEADER_SESSION_INCARNATION,
  SPAN_REQUEST_RECEIVED,
  SPAN_RESUME,
  SPAN_SESSION_CREATED,
  SPAN_SESSION_ENDED,
  SPAN_SSE_EVENT,
} from '../semconv.js';
import { DEFAULT_REQUEST_SPAN_DELAY_MS, DeferredRequests, epochNow } from '../common/deferred-requests.js';
import { newIncarnation, parseEventId } from '../common/incarnation.js';
import { describeMessage, describeText, type JsonRpcInfo } from '../common/jsonrpc-info.js';
import { componentLogger } from '../common/logger.js';
import { payloadDigest } from '../common/session-key.js';
import { SpanEmitter } from '../common/span-emitter.js';
import type { SseEvent } from '../common/sse-parser.js';
import { DEFAULT_MAX_EVENT_CHARS } from '../common/sse-parser.js';
import { DEFAULT_MAX_TRACKED_EVENT_IDS, EventIdTracker } from './event-id-tracker.js';
import { guardLinks, type GuardLink } from './guard-link.js';
import { contextOf, headerValue, nextLogicalTime, otelContextOf, requestContexts, rootOf, type RequestContext } from './request-context.js';
import { tapResponse } from './response-tap.js';
import { resumeOutcome } from './resume-outcome.js';
import { safeTracerProvider } from './safe-tracer-provider.js';
import type { ServerInstrumentation, ServerInstrumentationOptions, SessionEndReason } from './types.js';

/** Default of `maxTrackedSessions`. */
export const DEFAULT_MAX_TRACKED_SESSIONS = 10_000;
/** The SDK's stream id of the standalone GET stream. */
const STANDALONE_STREAM_ID = '_GET_stream';

type Attrs = Record<string, string | number | boolean | undefined | null>;

/** Per transport instance: its one incarnation and what it sent. */
interface TransportState {
  transport: StreamableHTTPServerTransport;
  link?: GuardLink;
  incarnation?: string;
  sessionId?: string;
  /** Root request during which the incarnation was created. */
  createdBy?: RequestContext;
  /** Logical time ({@link nextLogicalTime}) the incarnation was created; undefined when adopted late. */
  createdAt?: number;
  /** Created by a request other than initialize under the id the client presented (rehydration). */
  rehydrated?: boolean;
  tracker: EventIdTracker;
  ended: boolean;
  pendingEnd?: { reason: SessionEndReason; eventsEvicted?: number };
  /** A DELETE is being handled: a close now is the client's. */
  deleting: boolean;
  /** Requests being handled while the incarnation is still unknown: one of them creates it. */
  inflight: RequestContext[];
  /** Requests received and not yet answered, whose span is held back, by JSON-RPC id. */
  unanswered: Map<string, HeldRequest>;
}

/** A received request whose `forkwatch.request.received` waits (see DeferredRequests). */
interface HeldRequest {
  at: number;
  state: TransportState;
  info: JsonRpcInfo;
  /** The request headers the SDK handed onmessage: trace context and protocol version. */
  headers: Record<string, string> | undefined;
}

const OBSERVED = Symbol.for('forkwatch.server.observed');

/**
 * True only when the SDK transport positively has no event store: its SSE frames then carry no
 * `id:` (the SDK numbers events only through the store), so there is nothing to record from them
 * and parsing every response body would be pure overhead. Any unknown shape answers false.
 */
function lacksEventStore(transport: StreamableHTTPServerTransport): boolean {
  try {
    const inner = (transport as unknown as { _webStandardTransport?: unknown })._webStandardTransport;
    const holder = inner !== null && typeof inner === 'object' ? inner : transport;
    return '_eventStore' in holder && (holder as { _eventStore?: unknown })._eventStore === undefined;
  } catch {
    return false;
  }
}

/**
 * Creates the server instrumentation. Never throws; every hook it installs catches its own
 * errors and passes the host's calls through unchanged.
 */
export function createServerInstrumentation(options: ServerInstrumentationOptions = {}): ServerInstrumentation {
  const logger = componentLogger('server');
  const salt = options.salt ?? process.env.FORKWATCH_SESSION_SALT ?? '';
  const recordRawSessionId = options.recordRawSessionId ?? false;
  const maxTrackedEventIds = options.maxTrackedEventIds ?? DEFAULT_MAX_TRACKED_EVENT_IDS;
  const maxTrackedSessions = options.maxTrackedSessions ?? DEFAULT_MAX_TRACKED_SESSIONS;
  const maxSseEventChars = options.maxSseEventChars ?? DEFAULT_MAX_EVENT_CHARS;
  const requestSpanDelayMs = options.requestSpanDelayMs ?? DEFAULT_REQUEST_SPAN_DELAY_MS;
  const tracerProvider = safeTracerProvider(options.tracerProvider, logger);
  const emitterFor = (guarded: boolean): SpanEmitter =>
    new SpanEmitter({ side: 'server', tracerProvider, salt, recordRawSessionId, guarded, logger });
  const plain = emitterFor(false);
  const guarded = emitterFor(true);
  /** Live states by raw session id, for markEnded(id); insertion-ordered so the oldest go first. */
  const bySessionId = new Map<string, TransportState>();
  const states = new WeakMap<object, TransportState>();

  const safely = (what: string, fn: () => void): void => {
    try {
      fn();
    } catch (err) {
      logger.debug(`${what} failed`, err);
    }
  };

  /**
   * Wrapped requests presenting a session id, while they are handled: a transport that creates a
   * session under that id was fed by one of them (a handler rehydrating it, perhaps through a
   * synthetic initialize), which is then the request that created it. An entry whose response has
   * closed counts as absent; closed entries are swept when the map has doubled since the last
   * sweep, rather than removed by a 'close' listener on every response (a listener, its closure
   * and its once-wrapper per request were garbage on the host's hot path). So at most 64 or half
   * the map are finished requests waiting for a sweep.
   */
  const presenting = new Map<string, { ctx: RequestContext; res: ServerResponse }>();
  let presentingSweepAt = 64;
  const present = (sid: string, ctx: RequestContext, res: ServerResponse): void => {
    // Also at the cap before a new id would be refused: the entries holding it may all be finished.
    if (presenting.size >= presentingSweepAt || (presenting.size >= maxTrackedSessions && !presenting.has(sid))) {
      for (const [k, v] of presenting) if (v.res.closed) presenting.delete(k);
      presentingSweepAt = Math.max(64, presenting.size * 2);
    }
    if (presenting.size < maxTrackedSessions || presenting.has(sid)) presenting.set(sid, { ctx, res });
  };

  const newContext = (req: IncomingMessage, wrapped: boolean): RequestContext => {
    // Every field present from the start: one object shape for every request.
    const ctx: RequestContext = {
      headers: req.headers,
      parent: undefined,
      wrapped,
      method: (req.method ?? 'unknown').toUpperCase(),
      arrival: nextLogicalTime(),
      sessionIdHeader: headerValue(req, HEADER_SESSION_ID),
      lastEventId: headerValue(req, HEADER_LAST_EVENT_ID),
      protocolVersion: headerValue(req, HEADER_PROTOCOL_VERSION),
      otelContext: undefined,
      rpcMethod: undefined,
      claimed: false,
      resumeEmitted: false,
      guard: undefined,
    };
    requestContexts.set(req, ctx);
    return ctx;
  };

  /** The request a session created now is credited to: the real one a synthetic request was fed by. */
  const creatorOf = (ctx: RequestContext, sessionId: string): RequestContext => {
    const root = rootOf(ctx);
    if (root.wrapped) return root;
    const entry = presenting.get(sessionId);
    const outer = entry === undefined || entry.res.closed ? undefined : entry.ctx;
    if (outer === undefined || outer === root) return root;
    root.parent = outer;
    return outer;
  };

  const incarnationAttrs = (state: TransportState | undefined): Attrs => {
    if (!state?.incarnation) return {};
    return {
      [ATTR_SESSION_INCARNATION]: state.incarnation,
      [ATTR_SESSION_INCARNATION_SOURCE]: state.link ? 'server' : 'observed',
    };
  };

  const emitterOf = (state: TransportState | undefined): SpanEmitter => (state?.link ? guarded : plain);

  const track = (state: TransportState, sessionId: string): void => {
    if (bySessionId.size >= maxTrackedSessions && !bySessionId.has(sessionId)) {
      const oldest = bySessionId.keys().next();
      if (!oldest.done) bySessionId.delete(oldest.value);
    }
    bySessionId.set(sessionId, state);
  };

  /** Creates the incarnation once the transport's session id is known and the cause is. */
  const maybeCreate = (state: TransportState, ctx: RequestContext | undefined, final: boolean): void => {
    if (state.incarnation !== undefined) return;
    const sessionId = state.transport.sessionId;
    if (sessionId === undefined) return;
    const root = ctx ? creatorOf(ctx, sessionId) : undefined;
    let createdBy = 'unknown';
    if (root) {
      if (root.method === 'POST') {
        // The POST body's method is learnt from onmessage; wait for it unless this is the last chance.
        const m = root.rpcMethod ?? ctx?.rpcMethod;
        if (m === undefined && !final) return;
        createdBy = m ?? 'unknown';
      } else {
        createdBy = root.method;
      }
    }
    const link = state.link ?? guardLinks.get(state.transport);
    if (link) state.link = link;
    state.incarnation = link?.incarnation ?? newIncarnation();
    state.sessionId = sessionId;
    state.createdAt = nextLogicalTime();
    if (root) state.createdBy = root;
    track(state, sessionId);
    const supplied =
      root !== undefined && (root.sessionIdHeader === sessionId || (ctx !== undefined && ctx.sessionIdHeader === sessionId));
    state.rehydrated = supplied && createdBy !== 'initialize';
    emitterOf(state).emit(
      SPAN_SESSION_CREATED,
      sessionId,
      {
        ...incarnationAttrs(state),
        [ATTR_SESSION_CREATED_BY]: createdBy,
        [ATTR_SESSION_CLIENT_SUPPLIED_ID]: supplied,
        [ATTR_RESUME_LAST_EVENT_ID]: root?.lastEventId ?? ctx?.lastEventId,
        [ATTR_HTTP_REQUEST_METHOD]: root?.method,
        [ATTR_MCP_PROTOCOL_VERSION]: root?.protocolVersion,
      },
      root ? otelContextOf(root) : undefined,
    );
  };

  const end = (state: TransportState, fallback: SessionEndReason): void => {
    if (state.ended) return;
    state.ended = true;
    // Requests still unanswered when their session ends are what an orphan is made of: out now.
    for (const held of state.unanswered.values()) {
      deferred.delete(held);
      emitReceived(held);
    }
    state.unanswered.clear();
    const sessionId = state.sessionId ?? state.transport.sessionId;
    if (sessionId !== undefined && bySessionId.get(sessionId) === state) bySessionId.delete(sessionId);
    // A transport that never got a session id never had an incarnation: nothing ended.
    if (state.incarnation === undefined) return;
    const reason = state.pendingEnd?.reason ?? (state.deleting ? 'closed_by_client' : fallback);
    emitterOf(state).emit(SPAN_SESSION_ENDED, sessionId, {
      ...incarnationAttrs(state),
      [ATTR_SESSION_END_REASON]: reason,
      [ATTR_SESSION_EVENTS_EVICTED]: state.pendingEnd?.eventsEvicted,
    });
  };

  /**
   * The serving incarnation did not exist when the request arrived: created by this very request,
   * or by a concurrent one (apps share one rehydration between the GET and POST streams the SDK
   * reconnects together, so the request that mints it is often not the resume itself).
   */
  const bornDuring = (state: TransportState, ctx: RequestContext): boolean => {
    const root = rootOf(ctx);
    if (state.createdBy !== undefined && state.createdBy === root) return true;
    return state.createdAt !== undefined && state.createdAt > root.arrival;
  };

  const lastEventFound = (state: TransportState, ctx: RequestContext, lastEventId: string): boolean | undefined => {
    // An incarnation born while this request was in flight has sent nothing it could resume.
    if (bornDuring(state, ctx)) return false;
    if (state.link) return state.link.lookup(lastEventId).found;
    return state.tracker.knows(lastEventId);
  };

  const emitResume = (
    ctx: RequestContext,
    status: number,
    sessionId: string | undefined,
    state: TransportState | undefined,
    extra: Attrs,
    emitter: SpanEmitter,
  ): void => {
    if (ctx.lastEventId === undefined || ctx.resumeEmitted) return;
    ctx.resumeEmitted = true;
    // A 2xx resume is a fork when the serving incarnation was born during the request, or when it
    // is a rehydrated life that does not know the cursor (the cursor came from an earlier life).
    const createdHere =
      state !== undefined && (bornDuring(state, ctx) || (state.rehydrated === true && extra[ATTR_RESUME_LAST_EVENT_FOUND] === false));
    emitter.emit(
      SPAN_RESUME,
      sessionId,
      {
        ...incarnationAttrs(state),
        ...extra,
        [ATTR_RESUME_LAST_EVENT_ID]: ctx.lastEventId,
        [ATTR_HTTP_REQUEST_METHOD]: ctx.method,
        [ATTR_HTTP_RESPONSE_STATUS_CODE]: status,
        [ATTR_RESUME_OUTCOME]: resumeOutcome(status, createdHere),
        [ATTR_MCP_PROTOCOL_VERSION]: ctx.protocolVersion,
      },
      otelContextOf(ctx),
    );
  };

  const onSseEvent = (state: TransportState, ctx: RequestContext, ev: SseEvent): void => {
    if (ev.id === undefined) return;
    const id = ev.id;
    const parsed = parseEventId(id);
    const known = state.tracker.get(id);
    const replayed = known !== undefined;
    let seq: number | undefined;
    let seqSource: string | undefined;
    if (parsed.seq !== undefined) {
      seq = parsed.seq;
      seqSource = parsed.source;
    } else {
      seq = known ?? state.tracker.nextObservedSeq();
      seqSource = 'observed';
    }
    state.tracker.add(id, seq);
    const info = ev.data === '' ? { kind: 'none' as const } : (describeText(ev.data)[0] ?? { kind: 'none' as const });
    let streamId = state.link?.streamIdOf(id);
    if (streamId === undefined && ctx.method === 'GET' && ctx.lastEventId === undefined) streamId = STANDALONE_STREAM_ID;
    emitterOf(state).emit(
      SPAN_SSE_EVENT,
      state.transport.sessionId,
      {
        ...incarnationAttrs(state),
        [ATTR_SSE_EVENT_ID]: id,
        [ATTR_SSE_EVENT_SEQ]: seq,
        [ATTR_SSE_EVENT_SEQ_SOURCE]: seqSource,
        [ATTR_SSE_STREAM_ID]: streamId,
        [ATTR_SSE_REPLAYED]: replayed,
        [ATTR_SSE_PAYLOAD_DIGEST]: payloadDigest(ev.data),
        [ATTR_SSE_PAYLOAD_BYTES]: Buffer.byteLength(ev.data, 'utf8'),
        [ATTR_JSONRPC_KIND]: info.kind,
        [ATTR_JSONRPC_REQUEST_ID]: info.id,
        [ATTR_MCP_METHOD_NAME]: info.method,
        [ATTR_PROGRESS_TOKEN]: info.method === 'notifications/progress' ? info.progressToken : undefined,
        [ATTR_MCP_PROTOCOL_VERSION]: rootOf(ctx).protocolVersion ?? ctx.protocolVersion,
      },
      otelContextOf(ctx),
    );
  };

  const emitReceived = (held: HeldRequest): void => {
    const { state, info, headers } = held;
    let otelContext: Context | undefined;
    if (headers !== undefined) {
      try {
        otelContext = propagation.extract(context.active(), headers);
      } catch {
        // A broken propagator only costs the trace link.
      }
    }
    const pv = headers?.[HEADER_PROTOCOL_VERSION];
    emitterOf(state).emit(
      SPAN_REQUEST_RECEIVED,
      state.sessionId ?? state.transport.sessionId,
      {
        // Written out rather than spread from incarnationAttrs(): this span is emitted per request.
        [ATTR_SESSION_INCARNATION]: state.incarnation || undefined,
        [ATTR_SESSION_INCARNATION_SOURCE]: state.incarnation ? (state.link ? 'server' : 'observed') : undefined,
        [ATTR_MCP_METHOD_NAME]: info.method,
        [ATTR_JSONRPC_REQUEST_ID]: info.id,
        [ATTR_PROGRESS_TOKEN]: info.progressToken,
        [ATTR_GEN_AI_TOOL_NAME]: info.toolName,
        [ATTR_MCP_PROTOCOL_VERSION]: typeof pv === 'string' ? pv : undefined,
      },
      otelContext,
      held.at,
    );
  };

  const deferred = new DeferredRequests<HeldRequest>(requestSpanDelayMs, (held) => {
    safely('request.received', () => {
      if (held.info.id !== undefined) held.state.unanswered.delete(held.info.id);
      emitReceived(held);
    });
  });

  /** The request a message arrived on, while it matters (the incarnation is still unknown). */
  const inflightFor = (state: TransportState): RequestContext | undefined => {
    const list = state.inflight;
    if (list.length <= 1) return list[0];
    // The SDK hands onmessage no request object: the oldest POST still without a method is the best guess.
    for (const c of list) if (c.method === 'POST' && c.rpcMethod === undefined) return c;
    return list[list.length - 1];
  };

  const onMessage = (state: TransportState, message: unknown, extra: unknown): void => {
    const info = describeMessage(message);
    if (state.incarnation === undefined) {
      const ctx = inflightFor(state);
      if (ctx && ctx.rpcMethod === undefined && info.method !== undefined) ctx.rpcMethod = info.method;
      maybeCreate(state, ctx, false);
    }
    if (info.kind !== 'request') return;
    const headers = (extra as { requestInfo?: { headers?: Record<string, string> } } | undefined)?.requestInfo?.headers;
    const held: HeldRequest = { at: epochNow(), state, info, headers };
    if (requestSpanDelayMs <= 0 || info.id === undefined || info.method === 'initialize' || state.unanswered.size >= maxTrackedEventIds) {
      emitReceived(held);
      return;
    }
    state.unanswered.set(info.id, held);
    deferred.add(held);
  };

  /** A response or error leaving for a held request: answered in time, no span. */
  const onSend = (state: TransportState, message: unknown): void => {
    if (state.unanswered.size === 0 || message === null || typeof message !== 'object') return;
    const m = message as { id?: unknown; result?: unknown; error?: unknown };
    if (m.id === undefined || (m.result === undefined && m.error === undefined)) return;
    const id = String(m.id);
    const held = state.unanswered.get(id);
    if (held === undefined) return;
    state.unanswered.delete(id);
    deferred.delete(held);
  };

  /**
   * Makes `name` on the instance an accessor that wraps whatever handler is assigned (the SDK's
   * Protocol assigns onmessage/onclose in connect()). Reads return what the host assigned.
   */
  const interceptHandler = (
    transport: StreamableHTTPServerTransport,
    name: 'onmessage' | 'onclose',
    wrap: (h: (...a: any[]) => unknown) => (...a: any[]) => unknown,
  ): void => {
    let desc: PropertyDescriptor | undefined;
    for (let p = Object.getPrototypeOf(transport) as object | null; p && !desc; p = Object.getPrototypeOf(p) as object | null) {
      desc = Object.getOwnPropertyDescriptor(p, name);
    }
    const setter = desc?.set;
    const own = Object.getOwnPropertyDescriptor(transport, name);
    let current: unknown = own ? (own.get ? own.get.call(transport) : own.value) : desc?.get?.call(transport);
    let wrapped: unknown;
    const install = (h: unknown): void => {
      current = h;
      wrapped = typeof h === 'function' ? wrap(h as (...a: any[]) => unknown) : h;
      if (setter) setter.call(transport, wrapped);
    };
    install(current);
    Object.defineProperty(transport, name, {
      configurable: true,
      enumerable: true,
      // With an upstream setter the inner transport calls the wrapped handler itself; without
      // one (a plain field) callers invoke what they read, so they must read the wrapped one.
      get: () => (setter ? current : wrapped),
      set: (h: unknown) => install(h),
    });
  };

  const observeTransport = <T extends StreamableHTTPServerTransport>(transport: T): T => {
    try {
      const marked = transport as T & { [OBSERVED]?: true };
      if (marked[OBSERVED]) return transport;
      Object.defineProperty(marked, OBSERVED, { value: true });
      const state: TransportState = {
        transport,
        tracker: new EventIdTracker(maxTrackedEventIds),
        ended: false,
        deleting: false,
        inflight: [],
        unanswered: new Map(),
      };
      const link = guardLinks.get(transport);
      if (link) state.link = link;
      states.set(transport, state);
      const parseSse = !lacksEventStore(transport);
      // Observed after it already served requests: its creation was missed, and guessing its
      // cause would report a fork that never happened. Adopt it without a session.created.
      const inner = (transport as unknown as { _webStandardTransport?: { _hasHandledRequest?: unknown } })._webStandardTransport;
      const lateSessionId = transport.sessionId;
      if (lateSessionId !== undefined && inner?._hasHandledRequest === true) {
        state.incarnation = link?.incarnation ?? newIncarnation();
        state.sessionId = lateSessionId;
        track(state, lateSessionId);
      }

      // The per-message hooks catch inline and pass `arguments` through: a closure or a rest
      // array per message was garbage on the host's hot path.
      interceptHandler(transport, 'onmessage', (h) =>
        function (this: unknown, message: unknown, extra: unknown) {
          try {
            onMessage(state, message, extra);
          } catch (err) {
            logger.debug('onmessage hook failed', err);
          }
          // eslint-disable-next-line prefer-rest-params
          return h.apply(this, arguments as unknown as unknown[]);
        },
      );
      interceptHandler(transport, 'onclose', (h) =>
        function (this: unknown, ...args: any[]) {
          safely('onclose hook', () => end(state, 'transport_closed'));
          return h.apply(this, args);
        },
      );

      const origSend = transport.send;
      transport.send = function send(this: T, message: any, options?: any) {
        try {
          onSend(state, message);
        } catch (err) {
          logger.debug('send hook failed', err);
        }
        return origSend.call(this, message, options);
      } as T['send'];

      const origClose = transport.close;
      transport.close = async function close(this: T) {
        try {
          return await origClose.call(this);
        } finally {
          safely('close hook', () => end(state, 'transport_closed'));
        }
      };

      const origHandle = transport.handleRequest;
      transport.handleRequest = function handleRequest(this: T, req: IncomingMessage, res: ServerResponse, parsedBody?: unknown) {
        let ctx: RequestContext | undefined;
        let creating = false;
        try {
          const c = contextOf(req) ?? newContext(req, false);
          ctx = c;
          c.claimed = true;
          if (c.method === 'DELETE') state.deleting = true;
          if (c.method === 'POST' && parsedBody !== undefined && c.rpcMethod === undefined) {
            const first = Array.isArray(parsedBody) ? parsedBody[0] : parsedBody;
            const m = describeMessage(first).method;
            if (m !== undefined) c.rpcMethod = m;
          }
          creating = state.incarnation === undefined;
          if (creating) {
            state.inflight.push(c);
            maybeCreate(state, c, false);
          }
          // Most requests of a live session need nothing from their response: leave it untouched.
          if (creating || parseSse || c.lastEventId !== undefined || c.method === 'DELETE') {
            tapResponse(
              res,
              {
                onHead: (status) => {
                  maybeCreate(state, c, true);
                  if (c.lastEventId !== undefined) {
                    const sessionId = transport.sessionId ?? c.sessionIdHeader;
                    const found = state.incarnation !== undefined ? lastEventFound(state, c, c.lastEventId) : undefined;
                    emitResume(c, status, sessionId, state, { [ATTR_RESUME_LAST_EVENT_FOUND]: found }, emitterOf(state));
                  }
                  if (c.method === 'DELETE' && status >= 400) state.deleting = false;
                },
                ...(parseSse ? { onSseEvent: (ev: SseEvent) => onSseEvent(state, c, ev) } : {}),
                onHookError: (err) => logger.debug('response hook failed', err),
              },
              maxSseEventChars,
            );
          }
        } catch (err) {
          logger.debug('handleRequest hook failed', err);
        }
        const p: Promise<void> = origHandle.call(this, req, res, parsedBody);
        const c = ctx;
        if (!c || !creating) return p;
        return p.finally(() => {
          safely('handleRequest end hook', () => {
            const i = state.inflight.indexOf(c);
            if (i >= 0) state.inflight.splice(i, 1);
            maybeCreate(state, c, true);
          });
        });
      } as T['handleRequest'];
    } catch (err) {
      logger.debug('observeTransport failed', err);
    }
    return transport;
  };

  const wrapHandler = <H extends (req: IncomingMessage, res: ServerResponse, ...rest: any[]) => unknown>(handler: H): H => {
    const wrapped = function (this: unknown, req: IncomingMessage, res: ServerResponse) {
      try {
        // Wrapped twice around one request (an app's wrapper around a guard's): the outer one records.
        if (contextOf(req) === undefined) {
          const c = newContext(req, true);
          if (c.sessionIdHeader !== undefined) present(c.sessionIdHeader, c, res);
          if (c.lastEventId !== undefined) {
            tapResponse(res, {
              onHead: (status, header) => {
                if (c.claimed) return;
                const incarnation = c.guard?.incarnation ?? header(HEADER_SESSION_INCARNATION);
                const extra: Attrs = { [ATTR_RESUME_LAST_EVENT_FOUND]: c.guard?.lastEventFound };
                if (incarnation !== undefined) {
                  extra[ATTR_SESSION_INCARNATION] = incarnation;
                  extra[ATTR_SESSION_INCARNATION_SOURCE] = 'server';
                }
                emitResume(c, status, c.sessionIdHeader, undefined, extra, c.guard ? guarded : plain);
              },
              onHookError: (err) => logger.debug('handler hook failed', err),
            });
          }
        }
      } catch (err) {
        logger.debug('wrapHandler hook failed', err);
      }
      // eslint-disable-next-line prefer-rest-params
      return handler.apply(this, arguments as unknown as Parameters<H>);
    };
    return wrapped as unknown as H;
  };

  const markEnded = (sessionIdOrTransport: string | StreamableHTTPServerTransport, reason: SessionEndReason, eventsEvicted?: number): void => {
    safely('markEnded', () => {
      const state = typeof sessionIdOrTransport === 'string' ? bySessionId.get(sessionIdOrTransport) : states.get(sessionIdOrTransport);
      if (!state || state.ended) return;
      state.pendingEnd = eventsEvicted === undefined ? { reason } : { reason, eventsEvicted };
    });
  };

  return {
    observeTransport,
    wrapHandler,
    markEnded,
    flush: () => safely('flush', () => deferred.flush()),
    get failures() {
      return plain.failures + guarded.failures;
    },
  };
}
