import type { DiagLogger } from '@opentelemetry/api';
import { ATTR_SESSION_INCARNATION, ATTR_SESSION_INCARNATION_SOURCE } from '../semconv.js';
import { DEFAULT_REQUEST_SPAN_DELAY_MS } from '../common/deferred-requests.js';
import {
  DEFAULT_MAX_BUFFERED_EVENTS,
  DEFAULT_MAX_BUFFERED_PAYLOAD_CHARS,
  DEFAULT_MAX_BUFFERED_EVENTS_PER_SESSION,
  EventRingStore,
} from '../common/event-ring.js';
import { DEFAULT_MAX_PARSE_CHARS } from '../common/jsonrpc-info.js';
import { intOption } from '../common/resolve-options.js';
import { componentLogger } from '../common/logger.js';
import { SpanEmitter } from '../common/span-emitter.js';
import { DEFAULT_MAX_EVENT_CHARS } from '../common/sse-parser.js';
import { hashId, IdTable } from '../common/id-table.js';
import { MessageScanner } from '../common/scan-message.js';
import { BoundedMap } from './bounded-map.js';
import type { Attrs, SessionState, StreamTap } from './internal-types.js';

/** Default of `maxStreamIndex`: stream names kept per session to name a resumed GET stream. */
export const DEFAULT_MAX_STREAM_NAMES = 256;
import type { ClientInstrumentationOptions } from './types.js';

/**
 * What the parts of one ClientInstrumentation share: resolved options, the emitter, the per-session
 * state (incarnation, seen event ids) and the failure counters.
 */
export class ClientCore {
  readonly emitter: SpanEmitter;
  readonly log: DiagLogger = componentLogger('client');
  readonly sessions: BoundedMap<string, SessionState>;
  /** Names of the last streams of each session, so a GET resume is named after the stream it continues. */
  readonly maxStreamNames: number;
  /** Event ids received without a session id (their stream names only). */
  readonly noSession: SessionState;
  /** Reads each buffered event's message (one scanner, refilled per event). */
  readonly scanner: MessageScanner;
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
    this.maxSeen = options.maxSeenEventsPerSession ?? 4096;
    this.maxStreamNames = Math.max(1, options.maxStreamIndex ?? DEFAULT_MAX_STREAM_NAMES);
    this.maxSessionIdChars = options.maxSessionIdChars ?? 1024;
    this.maxEventChars = options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS;
    this.maxParseChars = options.maxParseChars ?? DEFAULT_MAX_PARSE_CHARS;
    this.maxPending = options.maxPendingEvents ?? 1024;
    this.maxPendingRequests = options.maxPendingRequests ?? 4096;
    this.deliveryTimeoutMs = options.deliveryTimeoutMs ?? 2000;
    this.injectTraceContext = options.injectTraceContext ?? true;
    this.requestSpanDelayMs = options.requestSpanDelayMs ?? DEFAULT_REQUEST_SPAN_DELAY_MS;
    this.noSession = this.newSession();
    this.rings = new EventRingStore(
      intOption(this.log, 'maxBufferedEventsPerSession', options.maxBufferedEventsPerSession, DEFAULT_MAX_BUFFERED_EVENTS_PER_SESSION),
      intOption(this.log, 'maxBufferedEvents', options.maxBufferedEvents, DEFAULT_MAX_BUFFERED_EVENTS),
      intOption(this.log, 'maxBufferedPayloadChars', options.maxBufferedPayloadChars, DEFAULT_MAX_BUFFERED_PAYLOAD_CHARS, 0),
    );
    this.scanner = new MessageScanner(this.maxParseChars, false);
  }

  /** A hook failed and was skipped: counted, logged at debug, never thrown. */
  fail(what: string, err: unknown): void {
    this.hookFailures++;
    this.log.debug(`${what} failed`, err);
  }

  session(sessionId: string): SessionState {
    return this.sessions.getOrCreate(sessionId, () => this.newSession());
  }

  private newSession(): SessionState {
    return {
      incarnation: undefined,
      seen: new IdTable(this.maxSeen),
      streams: [],
      streamCount: 0,
      ring: undefined,
      // With no delay everything is recorded as it happens, events included.
      hot: this.requestSpanDelayMs <= 0,
    };
  }

  /**
   * Remembers that the event of id hash `hash` came on `tap`'s stream, in `state` (the session
   * the tap answers for, or {@link noSession}); returns whether the id was there before.
   */
  noteEvent(state: SessionState, tap: StreamTap, hash: number): boolean {
    let serial = tap.serial;
    if (tap.serialOwner !== state) {
      serial = state.streamCount++;
      const streams = state.streams;
      if (streams.length < this.maxStreamNames) streams.push(tap.streamId!);
      else streams[serial % this.maxStreamNames] = tap.streamId!;
      tap.serial = serial;
      tap.serialOwner = state;
    }
    const before = state.seen.has(hash);
    state.seen.set(hash, serial);
    return before;
  }

  /** Name of the stream that brought event id `lastEventId` to session `sessionId`, if still known. */
  streamOf(sessionId: string | undefined, lastEventId: string): string | undefined {
    const state = sessionId ? this.sessions.get(sessionId) : this.noSession;
    if (state === undefined) return undefined;
    const serial = state.seen.get(hashId(lastEventId));
    if (serial === undefined || serial < state.streamCount - state.streams.length) return undefined;
    return state.streams[serial % this.maxStreamNames];
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
