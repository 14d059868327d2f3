import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ATTR_RESUME_LAST_EVENT_FOUND, ATTR_SESSION_INCARNATION, ATTR_SESSION_INCARNATION_SOURCE, HEADER_SESSION_INCARNATION } from '../semconv.js';
import { DEFAULT_REQUEST_SPAN_DELAY_MS } from '../common/deferred-requests.js';
import { newIncarnation } from '../common/incarnation.js';
import {
  DEFAULT_MAX_BUFFERED_EVENTS,
  DEFAULT_MAX_BUFFERED_PAYLOAD_CHARS,
  DEFAULT_MAX_BUFFERED_EVENTS_PER_SESSION,
  EventRingStore,
} from '../common/event-ring.js';
import { describeMessage } from '../common/jsonrpc-info.js';
import { intOption } from '../common/resolve-options.js';
import { componentLogger } from '../common/logger.js';
import { safeExecute } from '../common/safe-execute.js';
import type { SseEvent } from '../common/sse-parser.js';
import { DEFAULT_MAX_EVENT_CHARS } from '../common/sse-parser.js';
import { DEFAULT_MAX_TRACKED_EVENT_IDS, EventIdTracker } from './event-id-tracker.js';
import { guardLinks } from './guard-link.js';
import { ServerOperations } from '../conventional/server-operations.js';
import { HeldRequests } from './held-requests.js';
import { interceptHandler, lacksEventStore, OBSERVED } from './intercept-handler.js';
import type { Attrs, TransportState } from './internal-types.js';
import { contextOf, type RequestContext } from './request-context.js';
import { tapResponse } from './response-tap.js';
import { safeTracerProvider } from './safe-tracer-provider.js';
import { ServerEmitters } from './server-emitters.js';
import { SessionAttribution } from './session-attribution.js';
import { SessionLifecycle } from './session-lifecycle.js';
import { SseRecorder } from './sse-recorder.js';
import { isStatelessTransport, StatelessCalls } from './stateless-calls.js';
import { HandledReporter } from '../common/handled-reporter.js';
import { DEFAULT_REISSUE_WINDOW_MS } from '../common/recent-shapes.js';
import { TRACER_NAME, TRACER_VERSION } from '../common/span-emitter.js';
import { DEFAULT_MAX_TRACKED_SESSIONS, TransportRegistry } from './transport-registry.js';
import type { ServerInstrumentation, ServerInstrumentationOptions, SessionEndReason } from './types.js';

export { DEFAULT_MAX_TRACKED_SESSIONS } from './transport-registry.js';

/** `params.requestId` of a `notifications/cancelled` (string form), or undefined. */
function cancelledRequestId(message: unknown): string | undefined {
  const params = (message as { params?: { requestId?: unknown } }).params;
  const id = params !== null && typeof params === 'object' ? params.requestId : undefined;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
}

/**
 * Creates the server instrumentation. Never throws; every hook it installs catches its own
 * errors and passes the host's calls through unchanged.
 */
export function createServerInstrumentation(options: ServerInstrumentationOptions = {}): ServerInstrumentation {
  const logger = componentLogger('server');
  const maxTrackedEventIds = options.maxTrackedEventIds ?? DEFAULT_MAX_TRACKED_EVENT_IDS;
  const maxTrackedSessions = options.maxTrackedSessions ?? DEFAULT_MAX_TRACKED_SESSIONS;
  const maxSseEventChars = options.maxSseEventChars ?? DEFAULT_MAX_EVENT_CHARS;
  const requestSpanDelayMs = options.requestSpanDelayMs ?? DEFAULT_REQUEST_SPAN_DELAY_MS;
  const tracerProvider = safeTracerProvider(options.tracerProvider, logger);
  const emitters = new ServerEmitters({
    tracerProvider,
    salt: options.salt ?? process.env.FORKWATCH_SESSION_SALT ?? '',
    recordRawSessionId: options.recordRawSessionId ?? false,
    logger,
  });
  const registry = new TransportRegistry(maxTrackedSessions);
  const attribution = new SessionAttribution(maxTrackedSessions);
  const store = new EventRingStore(
    intOption(logger, 'maxBufferedEventsPerSession', options.maxBufferedEventsPerSession, DEFAULT_MAX_BUFFERED_EVENTS_PER_SESSION),
    intOption(logger, 'maxBufferedEvents', options.maxBufferedEvents, DEFAULT_MAX_BUFFERED_EVENTS),
    intOption(logger, 'maxBufferedPayloadChars', options.maxBufferedPayloadChars, DEFAULT_MAX_BUFFERED_PAYLOAD_CHARS, 0),
  );
  const sse = new SseRecorder(emitters, store, maxTrackedSessions);
  const held = new HeldRequests(emitters, logger, requestSpanDelayMs, maxTrackedEventIds, sse);
  const lifecycle = new SessionLifecycle(emitters, registry, attribution, held, sse);
  // SDK 1.x run stateless (no session id): its requests reported as the 2026-07-28 ones are.
  const statelessCalls = new StatelessCalls(
    new HandledReporter(tracerProvider.getTracer(TRACER_NAME, TRACER_VERSION), logger, options.reissueWindowMs ?? DEFAULT_REISSUE_WINDOW_MS, requestSpanDelayMs <= 0),
    logger,
  );
  // Built only when asked for: with the option off the hooks below test one constant.
  const conventional = options.mcpSemconv === true
    ? new ServerOperations({ tracerProvider: options.tracerProvider, meterProvider: options.meterProvider, salt: options.salt ?? process.env.FORKWATCH_SESSION_SALT ?? '', recordRawSessionId: options.recordRawSessionId ?? false, logger })
    : undefined;

  const onMessage = (state: TransportState, message: unknown, extra: unknown): void => {
    const info = describeMessage(message);
    if (state.incarnation === undefined) {
      const ctx = lifecycle.inflightFor(state);
      if (ctx && ctx.rpcMethod === undefined && info.method !== undefined) ctx.rpcMethod = info.method;
      lifecycle.maybeCreate(state, ctx, false);
    }
    if (info.kind === 'request') {
      held.received(state, info, extra);
      if (state.stateless !== undefined) statelessCalls.onRequest(state.stateless, message, extra);
    } else if (info.method === 'notifications/cancelled' && state.stateless === undefined) {
      const id = cancelledRequestId(message);
      if (id !== undefined) held.cancelled(state, id);
    }
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
        ring: undefined,
        // With no delay everything is recorded as it happens, events included.
        hot: requestSpanDelayMs <= 0,
      };
      // Nothing to watch for a tracer that records nothing (no SDK registered).
      if (isStatelessTransport(transport) && emitters.plain.enabled) state.stateless = { calls: new Map() };
      const link = guardLinks.get(transport);
      if (link) state.link = link;
      registry.add(transport, state);
      const parseSse = !lacksEventStore(transport);
      // Observed after it already served requests: its creation was missed, and guessing its
      // cause would report a fork that never happened. Adopt it without a session.created.
      const inner = (transport as unknown as { _webStandardTransport?: { _hasHandledRequest?: unknown } })._webStandardTransport;
      const lateSessionId = transport.sessionId;
      if (lateSessionId !== undefined && inner?._hasHandledRequest === true) {
        state.incarnation = link?.incarnation ?? newIncarnation();
        state.sessionId = lateSessionId;
        registry.track(state, lateSessionId);
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
          if (conventional !== undefined) return conventional.received(transport, message, extra, () => h.apply(this, arguments as unknown as unknown[]));
          // eslint-disable-next-line prefer-rest-params
          return h.apply(this, arguments as unknown as unknown[]);
        },
      );
      interceptHandler(transport, 'onclose', (h) =>
        function (this: unknown, ...args: any[]) {
          safeExecute(logger, 'onclose hook', () => {
            if (state.stateless !== undefined) statelessCalls.onClose(state.stateless);
            lifecycle.end(state, 'transport_closed');
          });
          if (conventional !== undefined) conventional.closed(transport);
          return h.apply(this, args);
        },
      );

      const origSend = transport.send;
      transport.send = function send(this: T, message: any, options?: any) {
        try {
          held.onSend(state, message);
          if (state.stateless !== undefined) statelessCalls.onSend(state.stateless, message, options);
          if (conventional !== undefined) conventional.sent(transport, message);
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
          safeExecute(logger, 'close hook', () => {
            if (state.stateless !== undefined) statelessCalls.onClose(state.stateless);
            lifecycle.end(state, 'transport_closed');
          });
        }
      };

      const origHandle = transport.handleRequest;
      transport.handleRequest = function handleRequest(this: T, req: IncomingMessage, res: ServerResponse, parsedBody?: unknown) {
        let ctx: RequestContext | undefined;
        let creating = false;
        try {
          const c = contextOf(req) ?? attribution.newContext(req, false);
          ctx = c;
          c.claimed = true;
          if (c.method === 'DELETE') state.deleting = true;
          if (state.stateless !== undefined) statelessCalls.watchResponse(state.stateless, res);
          if (c.method === 'POST' && parsedBody !== undefined && c.rpcMethod === undefined) {
            const first = Array.isArray(parsedBody) ? parsedBody[0] : parsedBody;
            const m = describeMessage(first).method;
            if (m !== undefined) c.rpcMethod = m;
          }
          creating = state.incarnation === undefined;
          if (creating) {
            state.inflight.push(c);
            lifecycle.maybeCreate(state, c, false);
          }
          // Most requests of a live session need nothing from their response: leave it untouched.
          if (creating || parseSse || c.lastEventId !== undefined || c.method === 'DELETE') {
            tapResponse(
              res,
              {
                onHead: (status) => {
                  lifecycle.maybeCreate(state, c, true);
                  // A resume, or an id answered under another session id, is a moment on the session.
                  const sid = transport.sessionId;
                  if (c.lastEventId !== undefined || (c.sessionIdHeader !== undefined && sid !== undefined && c.sessionIdHeader !== sid)) {
                    sse.moment(state, c.sessionIdHeader ?? sid);
                  }
                  if (c.lastEventId !== undefined) {
                    const sessionId = sid ?? c.sessionIdHeader;
                    const found = state.incarnation !== undefined ? sse.lastEventFound(state, c, c.lastEventId) : undefined;
                    sse.emitResume(c, status, sessionId, state, { [ATTR_RESUME_LAST_EVENT_FOUND]: found }, emitters.of(state));
                  }
                  if (c.method === 'DELETE' && status >= 400) state.deleting = false;
                },
                ...(parseSse ? { onSseEvent: (ev: SseEvent) => sse.onSseEvent(state, c, ev) } : {}),
                onHookError: (err) => logger.debug('response hook failed', err),
              },
              maxSseEventChars,
            );
          }
        } catch (err) {
          logger.debug('handleRequest hook failed', err);
        }
        // mcpSemconv: the POST's peer, for the spans of the messages it carries, until handled.
        const handled = conventional !== undefined ? conventional.httpRequest(transport, req) : undefined;
        let p: Promise<void>;
        try {
          p = origHandle.call(this, req, res, parsedBody);
        } catch (err) {
          handled?.();
          throw err;
        }
        // A branch of its own: the host still gets (and handles) the SDK's promise itself.
        if (handled !== undefined) void Promise.resolve(p).then(handled, handled);
        const c = ctx;
        if (!c || !creating) return p;
        return p.finally(() => {
          safeExecute(logger, 'handleRequest end hook', () => {
            const i = state.inflight.indexOf(c);
            if (i >= 0) state.inflight.splice(i, 1);
            lifecycle.maybeCreate(state, c, true);
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
          const c = attribution.newContext(req, true);
          if (c.sessionIdHeader !== undefined) attribution.present(c.sessionIdHeader, c, res);
          if (c.lastEventId !== undefined) {
            tapResponse(res, {
              onHead: (status, header) => {
                if (c.claimed) return;
                // Answered without a transport (e.g. a 404): earlier lives of the id are emitted.
                if (c.sessionIdHeader !== undefined) sse.moment(registry.find(c.sessionIdHeader), c.sessionIdHeader);
                const incarnation = c.guard?.incarnation ?? header(HEADER_SESSION_INCARNATION);
                const extra: Attrs = { [ATTR_RESUME_LAST_EVENT_FOUND]: c.guard?.lastEventFound };
                if (incarnation !== undefined) {
                  extra[ATTR_SESSION_INCARNATION] = incarnation;
                  extra[ATTR_SESSION_INCARNATION_SOURCE] = 'server';
                }
                sse.emitResume(c, status, c.sessionIdHeader, undefined, extra, c.guard ? emitters.guarded : emitters.plain);
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
    safeExecute(logger, 'markEnded', () => {
      const state = registry.find(sessionIdOrTransport);
      if (!state || state.ended) return;
      state.pendingEnd = eventsEvicted === undefined ? { reason } : { reason, eventsEvicted };
    });
  };

  return {
    observeTransport,
    get bufferedEvents() {
      return store.bufferedEvents;
    },
    wrapHandler,
    markEnded,
    flush: () => safeExecute(logger, 'flush', () => held.flushAll()),
    get failures() {
      return emitters.failures;
    },
  };
}
