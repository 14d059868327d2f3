import { context, type Context } from '@opentelemetry/api';
import {
  ATTR_GUARD_FORK_KIND,
  ATTR_RESUME_LAST_EVENT_ID,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  HEADER_LAST_EVENT_ID,
  HEADER_SESSION_ID,
  HEADER_SESSION_INCARNATION,
  SPAN_GUARD_FORK,
} from '../semconv.js';
import { describeText, DEFAULT_MAX_PARSE_CHARS } from '../common/jsonrpc-info.js';
import { componentLogger } from '../common/logger.js';
import { payloadDigest } from '../common/session-key.js';
import { SpanEmitter } from '../common/span-emitter.js';
import { SseParser, DEFAULT_MAX_EVENT_CHARS } from '../common/sse-parser.js';
import { BoundedMap } from './bounded-map.js';
import { ForkGuard, type HighWaterMark } from './fork-guard.js';
import { markFork } from './fork-registry.js';
import { boundedSessionId, mayHaveBody, mediaType, readRequest, withBody } from './http-message.js';
import { inspectData, inspectMessage } from './inspect-message.js';
import { observeBody } from './observe-body.js';
import { isSessionForkError, SessionForkError } from './session-fork-error.js';
import { SseBlockSplitter } from './sse-block-splitter.js';
import type { ClientGuardOptions, FetchLike, ForkListener } from './types.js';
import type { AttachableClient } from './types.js';
import { safeEnqueue } from './safe-enqueue.js';

/** Structural view of the SDK transport the guard closes on a fork. */
export interface GuardableTransport {
  close(): Promise<void>;
  readonly sessionId?: string | undefined;
}

/** One wrapped fetch: one client connection. */
interface GuardChannel {
  transport: GuardableTransport | undefined;
  client: AttachableClient | undefined;
  session: ForkGuard | undefined;
  forked: SessionForkError | undefined;
  /** Event id → stream id, to check a resume against the stream it continues. */
  streamIndex: BoundedMap<string, string>;
  lastEventId: string | undefined;
}

/**
 * The client guard: a fetch layer enforcing the seed's checks on the wire (MISSION.md). On a fork
 * it emits `forkwatch.guard.fork`, tells `onFork` listeners, refuses further traffic of that
 * connection, and closes the transport so the SDK fails every pending request at once; requests
 * of an attached client then reject with the {@link SessionForkError}. Never lets a changed
 * `Mcp-Session-Id` reach the SDK (which would adopt it).
 */
export class ClientGuard {
  private readonly emitter: SpanEmitter;
  private readonly log = componentLogger('client-guard');
  private readonly channels = new WeakMap<FetchLike, GuardChannel>();
  private readonly byTransport = new WeakMap<object, GuardChannel>();
  private lastChannel: GuardChannel | undefined;
  private readonly listeners = new Set<ForkListener>();
  private readonly opts: Required<Pick<ClientGuardOptions, 'maxSeenEventsPerSession' | 'maxStreamsPerSession' | 'maxSessionIdChars' | 'maxEventChars'>>;
  private readonly salt: string;
  /** Hooks that failed and let traffic through unguarded. */
  hookFailures = 0;

  constructor(options: ClientGuardOptions = {}) {
    this.salt = options.salt ?? process.env.FORKWATCH_SESSION_SALT ?? '';
    this.emitter = new SpanEmitter({
      side: 'client',
      tracerProvider: options.tracerProvider,
      salt: this.salt,
      recordRawSessionId: options.recordRawSessionId ?? false,
      guarded: true,
      logger: this.log,
    });
    this.opts = {
      maxSeenEventsPerSession: options.maxSeenEventsPerSession ?? 4096,
      maxStreamsPerSession: options.maxStreamsPerSession ?? 256,
      maxSessionIdChars: options.maxSessionIdChars ?? 1024,
      maxEventChars: options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS,
    };
  }

  /** Subscribes to forks; returns the unsubscribe function. */
  onFork(listener: ForkListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The fork raised on a transport's connection, if any. */
  forkOf(transport: object): SessionForkError | undefined {
    return this.byTransport.get(transport)?.forked;
  }

  /** The incarnation the guard holds for a transport's session, when the server sent one. */
  incarnationOf(transport: object): string | undefined {
    return this.byTransport.get(transport)?.session?.incarnation;
  }

  /**
   * A guarded fetch for `new StreamableHTTPClientTransport(url, { fetch })`. Each call makes a
   * new connection channel with its own session state: use one per transport.
   * @param inner the fetch to call (e.g. an instrumentation's wrapFetch). Default `globalThis.fetch`.
   */
  wrapFetch(inner: FetchLike = globalThis.fetch): FetchLike {
    const ch: GuardChannel = {
      transport: undefined,
      client: undefined,
      session: undefined,
      forked: undefined,
      streamIndex: new BoundedMap(this.opts.maxSeenEventsPerSession),
      lastEventId: undefined,
    };
    const wrapped: FetchLike = (input, init) => this.fetchThrough(ch, inner, input, init);
    this.channels.set(wrapped, ch);
    this.lastChannel = ch;
    return wrapped;
  }

  /**
   * Binds a transport (closed on a fork) and optionally its client (requests rejected by the
   * close are re-thrown as the SessionForkError) to the fetch made for it by `wrapFetch`
   * (found as the transport's fetch, else the last one made).
   */
  attach(transport: GuardableTransport, client?: AttachableClient): void {
    const own = (transport as { _fetch?: FetchLike })._fetch;
    const ch = (own && this.channels.get(own)) || this.lastChannel;
    if (!ch) return;
    ch.transport = transport;
    this.byTransport.set(transport, ch);
    if (!client) return;
    ch.client = client;
    const original = client.request;
    client.request = function (this: unknown, ...args: unknown[]) {
      if (ch.forked) return Promise.reject(ch.forked);
      // Promise.resolve: a request() that returned no promise must not make `.catch` throw here.
      return Promise.resolve(original.apply(this, args)).catch((err: unknown) => {
        throw ch.forked && !isSessionForkError(err) ? ch.forked : err;
      });
    } as AttachableClient['request'];
  }

  private async fetchThrough(ch: GuardChannel, inner: FetchLike, input: string | URL | Request, init: RequestInit | undefined): Promise<Response> {
    if (ch.forked) throw ch.forked;
    const ctx = context.active();
    let req: ReturnType<typeof readRequest> | undefined;
    let isInitialize = false;
    let firstRequestId: string | undefined;
    // Taken before sending: a stream this request opens carries only events stored after it.
    let sentAt: HighWaterMark | undefined;
    try {
      sentAt = ch.session?.highWaterMark();
      req = readRequest(input, init);
      const infos = req.method === 'POST' && req.body !== undefined ? describeText(req.body, DEFAULT_MAX_PARSE_CHARS) : [];
      isInitialize = infos.some((i) => i.method === 'initialize');
      firstRequestId = infos.find((i) => i.id !== undefined)?.id;
    } catch (err) {
      this.hookFailures++;
      this.log.debug('guard request hook failed', err);
    }
    const res = await inner(input, init);
    if (!req || ch.forked) return res;
    let out: Response;
    try {
      out = this.check(ch, req, isInitialize, firstRequestId, sentAt, res, ctx);
    } catch (err) {
      if (!isSessionForkError(err)) {
        this.hookFailures++;
        this.log.debug('guard response hook failed', err);
        return res;
      }
      res.body?.cancel().catch(() => undefined);
      // Close after the SDK has handled this rejection, so any reconnect it schedules is cleared.
      this.fork(ch, err, ctx, true);
      throw err;
    }
    return out;
  }

  /** Checks one response; returns what the SDK gets, throws SessionForkError on a fork. */
  private check(
    ch: GuardChannel,
    req: ReturnType<typeof readRequest>,
    isInitialize: boolean,
    firstRequestId: string | undefined,
    sentAt: HighWaterMark | undefined,
    res: Response,
    ctx: Context,
  ): Response {
    const max = this.opts.maxSessionIdChars;
    const presented = boundedSessionId(req.headers.get(HEADER_SESSION_ID), max);
    const answered = boundedSessionId(res.headers.get(HEADER_SESSION_ID), max);
    const incHeader = res.headers.get(HEADER_SESSION_INCARNATION) ?? undefined;
    const incarnation = incHeader && incHeader.length <= 256 ? incHeader : undefined;
    const lastEventId = req.headers.get(HEADER_LAST_EVENT_ID) ?? undefined;
    const keyOf = (id: string | undefined): string | undefined => (id ? this.emitter.key(id) : undefined);

    if (isInitialize) {
      if (res.ok && answered) ch.session = this.newSession(answered, incarnation);
    } else if (!ch.session && presented) {
      // A transport handed an existing session id: guard from its first answer on.
      ch.session = this.newSession(presented, undefined);
    }
    const session = ch.session;
    const cursor = lastEventId ?? ch.lastEventId;
    if (presented && (res.status === 404 || (lastEventId !== undefined && res.status === 410))) {
      throw new SessionForkError('session_not_found', keyOf(presented), cursor, `HTTP ${res.status}`);
    }
    if (lastEventId !== undefined && res.status === 409) {
      throw new SessionForkError('replay_gap', keyOf(presented), cursor, 'HTTP 409');
    }
    if (!session) return res;
    if (!isInitialize && answered && answered !== session.sessionId) {
      throw new SessionForkError('session_id_changed', keyOf(session.sessionId), cursor);
    }
    if (!isInitialize) session.checkIncarnation(incarnation, cursor);
    const streamId =
      req.method === 'POST' ? `post:${firstRequestId ?? ''}` : lastEventId !== undefined ? (ch.streamIndex.get(lastEventId) ?? 'get') : 'get';
    if (lastEventId !== undefined && res.ok) {
      session.resume({ serverSessionId: answered, serverIncarnation: incarnation, lastEventId, serverLogHas: true, streamId });
    }
    if (!res.body || !res.ok || !mayHaveBody(res.status)) return res;
    const type = mediaType(res.headers.get('content-type'));
    if (type === 'text/event-stream') {
      // A new stream (not a resume): its first counter id must continue the session's sequence.
      if (lastEventId === undefined && !isInitialize) session.openStream(streamId, sentAt ?? {});
      return withBody(res, this.filterSse(ch, session, res.body, streamId, ctx));
    }
    if (type === 'application/json' && isInitialize) {
      let text = '';
      const body = observeBody(res.body, {
        text: (t) => {
          if (text.length + t.length <= DEFAULT_MAX_PARSE_CHARS) text += t;
        },
        // observeBody swallows what its observer throws: a fork found here must be raised by
        // hand (the transport closed, the pending initialize rejected), or it would go unseen.
        end: () => {
          try {
            const parsed: unknown = JSON.parse(text);
            for (const m of Array.isArray(parsed) ? parsed : [parsed]) session.checkIncarnation(inspectMessage(m).incarnation);
          } catch (err) {
            if (isSessionForkError(err)) this.fork(ch, err, ctx, true);
          }
        },
      });
      return withBody(res, body);
    }
    return res;
  }

  private newSession(id: string, incarnation: string | undefined): ForkGuard {
    return new ForkGuard(id, incarnation, {
      maxSeenEvents: this.opts.maxSeenEventsPerSession,
      maxStreams: this.opts.maxStreamsPerSession,
      sessionKey: this.emitter.key(id),
    });
  }

  /** Passes whole event blocks on, drops duplicates, stops the stream on a fork. */
  private filterSse(ch: GuardChannel, session: ForkGuard, body: ReadableStream<Uint8Array>, streamId: string, ctx: Context): ReadableStream<Uint8Array> {
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    const splitter = new SseBlockSplitter(this.opts.maxEventChars);
    const parser = new SseParser(this.opts.maxEventChars);
    const guard = this;
    return body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        // Nothing may leave transform or flush: the SDK reads this stream in a loop of its own,
        // and an error here would surface in the host as the stream's failure, not as the
        // guard's documented rejection of the pending call.
        transform(chunk, controller) {
          try {
            guard.filterChunk(ch, session, streamId, ctx, splitter, parser, decoder.decode(chunk, { stream: true }), controller, encoder);
          } catch (err) {
            guard.hookFailures++;
            guard.log.debug('guard stream hook failed', err);
            safeEnqueue(controller, chunk);
          }
        },
        flush(controller) {
          if (ch.forked) return;
          try {
            const rest = splitter.rest() + decoder.decode();
            if (rest) controller.enqueue(encoder.encode(rest));
          } catch (err) {
            guard.hookFailures++;
            guard.log.debug('guard stream flush failed', err);
          }
        },
      }),
    );
  }

  /** One chunk of an SSE body: complete event blocks checked, duplicates dropped, a fork ends the stream. */
  private filterChunk(
    ch: GuardChannel,
    session: ForkGuard,
    streamId: string,
    ctx: Context,
    splitter: SseBlockSplitter,
    parser: SseParser,
    text: string,
    controller: TransformStreamDefaultController<Uint8Array>,
    encoder: InstanceType<typeof TextEncoder>,
  ): void {
    if (ch.forked) return;
    const pieces = splitter.push(text);
    let out = '';
    for (const piece of pieces) {
      if (!piece.complete) {
        out += piece.text;
        continue;
      }
      try {
        const ev = parser.push(piece.text)[0];
        if (ev?.id !== undefined) {
          const info = inspectData(ev.data, DEFAULT_MAX_PARSE_CHARS);
          if (info.incarnation) session.checkIncarnation(info.incarnation, ev.id);
          if (!session.acceptEvent(ev.id, streamId, payloadDigest(ev.data))) continue;
          ch.streamIndex.set(ev.id, streamId);
          ch.lastEventId = ev.id;
        }
        out += piece.text;
      } catch (err) {
        if (!isSessionForkError(err)) {
          this.hookFailures++;
          out += piece.text;
          continue;
        }
        // What came before the fork is the old life's: the SDK gets it, then the stream ends.
        if (out) safeEnqueue(controller, encoder.encode(out));
        this.fork(ch, err, ctx, false);
        try {
          controller.terminate();
        } catch {
          // already closed by the transport's abort
        }
        return;
      }
    }
    if (out) safeEnqueue(controller, encoder.encode(out));
  }

  /**
   * Records a fork and closes the connection. Never throws: it runs inside stream callbacks and
   * timers where anything thrown would reach the host as an uncaught exception.
   */
  private fork(ch: GuardChannel, err: SessionForkError, ctx: Context, deferClose: boolean): void {
    if (ch.forked) return;
    ch.forked = err;
    try {
      this.announce(ch, err, ctx);
    } catch (e) {
      this.hookFailures++;
      this.log.debug('fork report failed', e);
    }
    const transport = ch.transport;
    if (!transport) return;
    const close = (): void => {
      try {
        // A host transport may close synchronously, or throw instead of rejecting.
        Promise.resolve(transport.close()).catch((e: unknown) => this.log.debug('transport close failed', e));
      } catch (e) {
        this.log.debug('transport close failed', e);
      }
    };
    if (deferClose) setImmediate(close);
    else close();
  }

  /** The span and the listeners of a fork. */
  private announce(ch: GuardChannel, err: SessionForkError, ctx: Context): void {
    markFork(ch.transport, err);
    markFork(ch.client, err);
    const sessionId = ch.session?.sessionId;
    this.emitter.emit(
      SPAN_GUARD_FORK,
      sessionId,
      {
        [ATTR_GUARD_FORK_KIND]: err.kind,
        [ATTR_RESUME_LAST_EVENT_ID]: err.lastEventId,
        [ATTR_SESSION_INCARNATION]: ch.session?.incarnation,
        [ATTR_SESSION_INCARNATION_SOURCE]: ch.session?.incarnation ? 'server' : undefined,
      },
      ctx,
    );
    for (const l of this.listeners) {
      try {
        l(err);
      } catch (e) {
        this.log.debug('fork listener failed', e);
      }
    }
  }
}

/** Creates a client guard; see {@link ClientGuardOptions} for defaults. */
export function createClientGuard(options: ClientGuardOptions = {}): ClientGuard {
  return new ClientGuard(options);
}
