import type { DiagLogger } from '@opentelemetry/api';
import { ATTR_SESSION_INCARNATION, ATTR_SESSION_INCARNATION_SOURCE } from '../semconv.js';
import { DEFAULT_REQUEST_SPAN_DELAY_MS } from '../common/deferred-requests.js';
import {
  DEFAULT_MAX_BUFFERED_EVENTS,
  DEFAULT_MAX_BUFFERED_EVENTS_PER_SESSION,
  DEFAULT_MAX_BUFFERED_PAYLOAD_CHARS,
  EventRingStore,
} from '../common/event-ring.js';
import { DEFAULT_MAX_PARSE_CHARS } from '../common/jsonrpc-info.js';
import { intOption } from '../common/resolve-options.js';
import { componentLogger } from '../common/logger.js';
import { SpanEmitter } from '../common/span-emitter.js';
import { DEFAULT_MAX_EVENT_CHARS } from '../common/sse-parser.js';
import { BoundedMap } from './bounded-map.js';
import type { Attrs, SessionState } from './internal-types.js';
import type { ClientInstrumentationOptions } from './types.js';

/**
 * What the parts of one ClientInstrumentation share: resolved options, the emitter, the per-session
 * state (incarnation, seen event ids) and the failure counters.
 */
export class ClientCore {
  readonly emitter: SpanEmitter;
  readonly log: DiagLogger = componentLogger('client');
  readonly sessions: BoundedMap<string, SessionState>;
  /** (session id, event id) → stream id, so a GET resume is named after the stream it continues. */
  readonly streamIndex: BoundedMap<string, string>;
  readonly maxSeen: number;
  readonly maxSessionIdChars: number;
  readonly maxEventChars: number;
  readonly maxParseChars: number;
  readonly maxPending: number;
  readonly maxPendingRequests: number;
  readonly deliveryTimeoutMs: number;
  readonly injectTraceContext: boolean;
  readonly requestSpanDelayMs: number;
  readonly rings: EventRingStore;
  hookFailures = 0;
  oversized = 0;

  constructor(options: ClientInstrumentationOptions) {
    this.emitter = new SpanEmitter({
      side: 'client',
      tracerProvider: options.tracerProvider,
      salt: options.salt ?? process.env.FORKWATCH_SESSION_SALT ?? '',
      recordRawSessionId: options.recordRawSessionId ?? false,
      guarded: options.guarded ?? false,
      logger: this.log,
    });
    this.sessions = new BoundedMap(options.maxSessions ?? 1024);
    this.streamIndex = new BoundedMap(options.maxStreamIndex ?? 4096);
    this.maxSeen = options.maxSeenEventsPerSession ?? 4096;
    this.maxSessionIdChars = options.maxSessionIdChars ?? 1024;
    this.maxEventChars = options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS;
    this.maxParseChars = options.maxParseChars ?? DEFAULT_MAX_PARSE_CHARS;
    this.maxPending = options.maxPendingEvents ?? 1024;
    this.maxPendingRequests = options.maxPendingRequests ?? 4096;
    this.deliveryTimeoutMs = options.deliveryTimeoutMs ?? 2000;
    this.injectTraceContext = options.injectTraceContext ?? true;
    this.requestSpanDelayMs = options.requestSpanDelayMs ?? DEFAULT_REQUEST_SPAN_DELAY_MS;
    this.rings = new EventRingStore(
      intOption(this.log, 'maxBufferedEventsPerSession', options.maxBufferedEventsPerSession, DEFAULT_MAX_BUFFERED_EVENTS_PER_SESSION),
      intOption(this.log, 'maxBufferedEvents', options.maxBufferedEvents, DEFAULT_MAX_BUFFERED_EVENTS),
      intOption(this.log, 'maxBufferedPayloadChars', options.maxBufferedPayloadChars, DEFAULT_MAX_BUFFERED_PAYLOAD_CHARS, 0),
    );
  }

  /** A hook failed and was skipped: counted, logged at debug, never thrown. */
  fail(what: string, err: unknown): void {
    this.hookFailures++;
    this.log.debug(`${what} failed`, err);
  }

  session(sessionId: string): SessionState {
    // With no delay everything is recorded as it happens, events included.
    return this.sessions.getOrCreate(sessionId, () => ({
      incarnation: undefined,
      seen: new BoundedMap(this.maxSeen),
      ring: undefined,
      hot: this.requestSpanDelayMs <= 0,
    }));
  }

  /** The incarnation held for an (already bounded) session id. */
  incarnationOf(sessionId: string | undefined): string | undefined {
    return sessionId ? this.sessions.get(sessionId)?.incarnation : undefined;
  }

  incarnationAttrs(sessionId: string | undefined): Attrs {
    const inc = this.incarnationOf(sessionId);
    return inc ? { [ATTR_SESSION_INCARNATION]: inc, [ATTR_SESSION_INCARNATION_SOURCE]: 'server' } : {};
  }
}
