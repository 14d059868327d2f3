import { context, propagation, type Context } from '@opentelemetry/api';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  ATTR_CLIENT_DELIVERY,
  ATTR_CLIENT_SEEN_BEFORE,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_JSONRPC_KIND,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_PROGRESS_TOKEN,
  ATTR_REQUEST_DURATION_MS,
  ATTR_REQUEST_OUTCOME,
  ATTR_REQUEST_PROGRESS_COUNT,
  ATTR_RESUME_ANSWERED_SESSION_KEY,
  ATTR_RESUME_LAST_EVENT_ID,
  ATTR_RESUME_OUTCOME,
  ATTR_RESUME_PREVIOUS_INCARNATION,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  ATTR_SSE_EVENT_ID,
  ATTR_SSE_EVENT_SEQ,
  ATTR_SSE_EVENT_SEQ_SOURCE,
  ATTR_SSE_PAYLOAD_BYTES,
  ATTR_SSE_PAYLOAD_DIGEST,
  ATTR_SSE_STREAM_ID,
  HEADER_LAST_EVENT_ID,
  HEADER_PROTOCOL_VERSION,
  HEADER_SESSION_ID,
  HEADER_SESSION_INCARNATION,
  SPAN_REQUEST_SENT,
  SPAN_REQUEST_SETTLED,
  SPAN_RESUME,
  SPAN_SSE_EVENT,
} from '../semconv.js';
import { DEFAULT_REQUEST_SPAN_DELAY_MS, DeferredRequests, epochNow } from '../common/deferred-requests.js';
import { parseEventId } from '../common/incarnation.js';
import { describeText, DEFAULT_MAX_PARSE_CHARS, type JsonRpcInfo } from '../common/jsonrpc-info.js';
import { componentLogger } from '../common/logger.js';
import { payloadDigest } from '../common/session-key.js';
import { SpanEmitter } from '../common/span-emitter.js';
import { SseParser, DEFAULT_MAX_EVENT_CHARS, type SseEvent } from '../common/sse-parser.js';
import { BoundedMap } from './bounded-map.js';
import { forkOf } from './fork-registry.js';
import { boundedSessionId, mayHaveBody, mediaType, readRequest, withBody, type OutgoingRequest } from './http-message.js';
import { inspectData, inspectMessage, sameMessage, type MessageInfo } from './inspect-message.js';
import { observeBody, observeBodyInPlace, type BodyObserver } from './observe-body.js';
import { isSessionForkError } from './session-fork-error.js';
import type { ClientInstrumentationOptions, FetchLike } from './types.js';

type Attrs = Record<string, string | number | boolean | undefined>;

/** Shared empty result for requests without a JSON-RPC body (never mutated). */
const NO_INFOS: JsonRpcInfo[] = [];
type Delivery = 'delivered' | 'dropped' | 'no_payload';
type Outcome = 'answered' | 'error' | 'timeout' | 'cancelled' | 'failed_fork' | 'failed_session_lost' | 'transport_error';

/** A wire event waiting to learn whether it reached the SDK. */
interface PendingEvent {
  streamId: string;
  sessionId: string | undefined;
  info: MessageInfo;
  attrs: Attrs;
  ctx: Context;
  deadline: number;
  decided: boolean;
}

/** A request made through a hooked `client.request`, from send to settlement. */
interface TrackedRequest {
  /** Send time, epoch ms. */
  at: number;
  id: string | undefined;
  method: string | undefined;
  tool: string | undefined;
  token: string | undefined;
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  /** Incarnation held when it was sent (a late span must not report a later one). */
  inc: string | undefined;
  ctx: Context;
  progressCount: number;
  /** `request.sent` went out (at once, or when the request outlived the delay). */
  sentEmitted: boolean;
}

/** One wrapped fetch: one client connection. */
interface Channel {
  fetch: FetchLike;
  attached: boolean;
  /** A hooked client records this connection's requests: the fetch does not. */
  requestsByClient: boolean;
  pending: PendingEvent[];
  timer: NodeJS.Timeout | undefined;
}

interface SessionState {
  incarnation: string | undefined;
  seen: BoundedMap<string, true>;
}

/** Structural view of the SDK's StreamableHTTPClientTransport that attach() relies on. */
export interface AttachableTransport {
  onmessage?: ((message: any, extra?: any) => void) | undefined;
  readonly sessionId?: string | undefined;
}

/** Structural view of the SDK's Client (Protocol) that attach() relies on. */
export interface AttachableClient {
  request: (...args: any[]) => Promise<any>;
}

/** Counters of what the instrumentation could not do; it never throws instead. */
export interface ClientInstrumentationStats {
  /** Hooks that failed and were skipped. */
  hookFailures: number;
  /** Spans the tracer refused. */
  spanFailures: number;
  /** SSE events skipped as oversized. */
  oversizedEvents: number;
}

/**
 * Client-side forkwatch instrumentation for the MCP SDK's Streamable HTTP transport. It observes
 * and never changes what the SDK sees: see {@link ClientInstrumentation.wrapFetch} and
 * {@link ClientInstrumentation.attach}.
 */
export class ClientInstrumentation {
  private readonly emitter: SpanEmitter;
  private readonly log = componentLogger('client');
  private readonly sessions: BoundedMap<string, SessionState>;
  /** (session id, event id) → stream id, so a GET resume is named after the stream it continues. */
  private readonly streamIndex: BoundedMap<string, string>;
  private readonly channels = new WeakMap<FetchLike, Channel>();
  private lastChannel: Channel | undefined;
  /** Transports bound to their fetch at construction (the zero-code patch), so attach finds it. */
  private readonly boundChannels = new WeakMap<object, Channel>();
  /** Channels with events awaiting a delivery decision: what forceFlush must settle. */
  private readonly armed = new Set<Channel>();
  private readonly maxSeen: number;
  private readonly maxSessionIdChars: number;
  private readonly maxEventChars: number;
  private readonly maxParseChars: number;
  private readonly maxPending: number;
  private readonly maxPendingRequests: number;
  private readonly deliveryTimeoutMs: number;
  private readonly injectTraceContext: boolean;
  private readonly requestSpanDelayMs: number;
  private readonly heldRequests: DeferredRequests<TrackedRequest>;
  private hookFailures = 0;
  private oversized = 0;
  /** The request headers propagation.inject is writing for, and their copy once it wrote. */
  private injecting: Headers | undefined;
  private injected: Headers | undefined;
  /** The caller set its own traceparent: it is kept, and nothing else is injected either. */
  private injectRefused = false;
  /** One setter for every request: a closure per call was garbage on the host's hot path. */
  private readonly injectSetter = {
    set: (_carrier: unknown, k: string, v: string): void => {
      const own = this.injecting;
      if (own === undefined || this.injectRefused) return;
      if (this.injected === undefined) {
        if (own.has('traceparent')) {
          this.injectRefused = true;
          return;
        }
        this.injected = new Headers(own);
      }
      this.injected.set(k, v);
    },
  };

  constructor(options: ClientInstrumentationOptions = {}) {
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
    this.heldRequests = new DeferredRequests(this.requestSpanDelayMs, (r) => this.emitSent(r));
  }

  /** What went wrong without being thrown. */
  get stats(): ClientInstrumentationStats {
    return { hookFailures: this.hookFailures, spanFailures: this.emitter.failures, oversizedEvents: this.oversized };
  }

  /** The incarnation this instrumentation holds for a raw session id, when a server sent one. */
  incarnationOf(sessionId: string): string | undefined {
    const id = boundedSessionId(sessionId, this.maxSessionIdChars);
    return id === undefined ? undefined : this.sessions.get(id)?.incarnation;
  }

  /**
   * A fetch for `new StreamableHTTPClientTransport(url, { fetch })` that records requests,
   * resumes and SSE events. Bytes pass through unchanged and unbuffered; `traceparent` is added
   * when absent. Each call makes a new connection channel: use one per transport.
   * @param inner the fetch to call. Default `globalThis.fetch`.
   */
  wrapFetch(inner: FetchLike = globalThis.fetch): FetchLike {
    const channel: Channel = { fetch: undefined as unknown as FetchLike, attached: false, requestsByClient: false, pending: [], timer: undefined };
    const wrapped: FetchLike = (input, init) => this.fetchThrough(channel, inner, input, init);
    channel.fetch = wrapped;
    this.channels.set(wrapped, channel);
    this.lastChannel = channel;
    return wrapped;
  }

  /**
   * Observes what reaches the SDK's protocol layer through `transport.onmessage` (an accessor
   * wraps whatever the Client assigns), turning wire events into `delivered`/`dropped`; with a
   * `client`, wraps `client.request` on the instance to emit `forkwatch.request.settled`. The
   * transport is matched to the fetch made for it by `wrapFetch` (the last one made when another
   * layer sits in between). Call before or after `client.connect(transport)`.
   */
  attach(transport: AttachableTransport, client?: AttachableClient): void {
    try {
      const own = (transport as { _fetch?: FetchLike })._fetch;
      const channel = this.boundChannels.get(transport) ?? ((own && this.channels.get(own)) || this.lastChannel);
      if (channel) {
        channel.attached = true;
        this.hookOnMessage(transport, channel);
      }
      if (client) {
        this.hookRequest(client, transport);
        if (channel) channel.requestsByClient = true;
      }
    } catch (err) {
      this.hookFailures++;
      this.log.debug('attach failed', err);
    }
  }

  /**
   * Ties `transport` to the fetch `wrapFetch` made for it, for transports whose SDK wraps the
   * fetch again (redirect policies), so `attach` never guesses. Used by McpForkInstrumentation.
   */
  bindTransport(transport: object, wrapped: FetchLike): void {
    const channel = this.channels.get(wrapped);
    if (channel) this.boundChannels.set(transport, channel);
  }

  // ---------------------------------------------------------------- fetch

  private async fetchThrough(channel: Channel, inner: FetchLike, input: string | URL | Request, init: RequestInit | undefined): Promise<Response> {
    const ctx = context.active();
    let seen: OutgoingRequest | undefined;
    let infos: JsonRpcInfo[] = NO_INFOS;
    let callInit = init;
    try {
      seen = readRequest(input, init);
      // With a hooked client the body is parsed only if an answer needs it (lazily, in onResponse).
      if (seen.method === 'POST' && seen.body !== undefined && !channel.requestsByClient) infos = describeText(seen.body, this.maxParseChars);
      if (this.injectTraceContext) {
        // The caller's headers are never changed: a copy is made only if the propagator sets
        // something, and only then is a traceparent of the caller's own looked for (with none
        // active, or with the API's no-op propagator, nothing is set and nothing is looked up).
        this.injecting = seen.headers;
        try {
          propagation.inject(ctx, seen.headers, this.injectSetter);
          const injected = this.injected;
          if (injected) {
            seen.headers = injected;
            callInit = { ...init, headers: injected };
          }
        } finally {
          this.injecting = undefined;
          this.injected = undefined;
          this.injectRefused = false;
        }
      }
      if (!channel.requestsByClient) this.onRequests(seen, infos, ctx);
    } catch (err) {
      this.hookFailures++;
      this.log.debug('request hook failed', err);
    }
    const response = await inner(input, callInit);
    if (!seen) return response;
    try {
      return this.onResponse(channel, seen, infos, response, ctx);
    } catch (err) {
      this.hookFailures++;
      this.log.debug('response hook failed', err);
      return response;
    }
  }

  private onRequests(req: OutgoingRequest, infos: JsonRpcInfo[], ctx: Context): void {
    if (infos.length === 0) return;
    const sessionId = boundedSessionId(req.headers.get(HEADER_SESSION_ID), this.maxSessionIdChars);
    const protocol = req.headers.get(HEADER_PROTOCOL_VERSION) ?? undefined;
    const inc = this.incarnationOf_(sessionId);
    for (const info of infos) {
      if (info.kind !== 'request') continue;
      this.emitter.emit(
        SPAN_REQUEST_SENT,
        sessionId,
        {
          [ATTR_MCP_METHOD_NAME]: info.method,
          [ATTR_JSONRPC_REQUEST_ID]: info.id,
          [ATTR_PROGRESS_TOKEN]: info.progressToken,
          [ATTR_GEN_AI_TOOL_NAME]: info.toolName,
          [ATTR_MCP_PROTOCOL_VERSION]: protocol,
          [ATTR_SESSION_INCARNATION]: inc,
          [ATTR_SESSION_INCARNATION_SOURCE]: inc ? 'server' : undefined,
        },
        ctx,
      );
    }
  }

  /** The JSON-RPC messages of a request body, parsed on first need when the fetch did not. */
  private infosOf(req: OutgoingRequest, infos: JsonRpcInfo[]): JsonRpcInfo[] {
    if (infos === NO_INFOS && req.method === 'POST' && req.body !== undefined) return describeText(req.body, this.maxParseChars);
    return infos;
  }

  private onResponse(channel: Channel, req: OutgoingRequest, parsed: JsonRpcInfo[], res: Response, ctx: Context): Response {
    const presented = boundedSessionId(req.headers.get(HEADER_SESSION_ID), this.maxSessionIdChars);
    const answered = boundedSessionId(res.headers.get(HEADER_SESSION_ID), this.maxSessionIdChars);
    const sessionId = answered ?? presented;
    const incHeader = res.headers.get(HEADER_SESSION_INCARNATION) ?? undefined;
    const incAnswered = incHeader && incHeader.length <= 256 ? incHeader : undefined;
    const lastEventId = req.headers.get(HEADER_LAST_EVENT_ID) ?? undefined;
    if (lastEventId !== undefined) {
      const previous = sessionId ? this.sessions.get(sessionId)?.incarnation : undefined;
      const idChanged = answered !== undefined && presented !== undefined && answered !== presented;
      const incChanged = incAnswered !== undefined && previous !== undefined && incAnswered !== previous;
      const s = res.status;
      const outcome =
        s === 404 || s === 410 ? 'rejected_404' : s === 409 ? 'rejected_gap' : s >= 200 && s < 300 ? (idChanged || incChanged ? 'forked' : 'resumed') : 'rejected_other';
      this.emitter.emit(
        SPAN_RESUME,
        presented,
        {
          [ATTR_RESUME_LAST_EVENT_ID]: lastEventId,
          [ATTR_HTTP_REQUEST_METHOD]: req.method,
          [ATTR_HTTP_RESPONSE_STATUS_CODE]: s,
          [ATTR_SESSION_INCARNATION]: incAnswered,
          [ATTR_SESSION_INCARNATION_SOURCE]: incAnswered ? 'server' : undefined,
          [ATTR_RESUME_PREVIOUS_INCARNATION]: previous,
          [ATTR_RESUME_ANSWERED_SESSION_KEY]: idChanged ? this.emitter.key(answered) : undefined,
          [ATTR_RESUME_OUTCOME]: outcome,
        },
        ctx,
      );
    }
    if (sessionId && incAnswered && res.ok) this.session(sessionId).incarnation = incAnswered;
    if (!res.body || !mayHaveBody(res.status) || !res.ok) return res;
    const type = mediaType(res.headers.get('content-type'));
    if (type === 'text/event-stream') {
      // The Response itself stays untouched (a changed prototype or a new Response cost the SDK's
      // hot paths more than the tap): its body's read methods are hooked, and `text()` and the
      // other body methods read through them too.
      observeBodyInPlace(res.body, new SseTap(this.sseText, this.maxEventChars, channel, req, parsed, sessionId, presented, lastEventId, ctx));
      return res;
    }
    // Only an InitializeResult carries an incarnation (inspectMessage): other JSON answers pass untouched.
    if (type === 'application/json' && sessionId && this.infosOf(req, parsed).some((i) => i.method === 'initialize')) {
      let text = '';
      let over = false;
      const body = observeBody(res.body, {
        text: (t) => {
          if (over) return;
          if (text.length + t.length > this.maxParseChars) {
            over = true;
            text = '';
          } else text += t;
        },
        end: () => {
          if (over || text.length === 0) return;
          const parsed: unknown = JSON.parse(text);
          for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
            const inc = inspectMessage(m).incarnation;
            if (inc) this.session(sessionId).incarnation = inc;
          }
        },
      });
      return withBody(res, body);
    }
    return res;
  }

  /** Text of an SSE body as the consumer decodes it; one handler for every tap. */
  private readonly sseText = (tap: SseTap, t: string): void => {
    const events = tap.push(t);
    for (let i = 0; i < events.length; i++) {
      const ev = events[i]!;
      if (ev.id !== undefined) this.onSseEvent(tap.channel, ev, tap.sessionId, this.streamIdOf(tap), tap.ctx);
    }
    this.oversized += tap.oversized;
    tap.oversized = 0;
  };

  /** Named at the first event with an id: most answers of servers without an event store have none. */
  private streamIdOf(tap: SseTap): string {
    if (tap.streamId !== undefined) return tap.streamId;
    const req = tap.req;
    let name: string;
    if (req.method === 'POST') {
      const firstId = this.infosOf(req, tap.infos).find((i) => i.id !== undefined)?.id;
      name = `post:${firstId ?? ''}`;
    } else {
      name = tap.lastEventId !== undefined ? (this.streamIndex.get(`${tap.presented ?? ''}\u0000${tap.lastEventId}`) ?? 'get') : 'get';
    }
    tap.streamId = name;
    return name;
  }

  private onSseEvent(channel: Channel, ev: SseEvent, sessionId: string | undefined, streamId: string, ctx: Context): void {
    if (ev.id === undefined) return;
    const info = inspectData(ev.data, this.maxParseChars);
    if (info.incarnation && sessionId) this.session(sessionId).incarnation = info.incarnation;
    let seenBefore: boolean | undefined;
    if (sessionId) {
      const seen = this.session(sessionId).seen;
      seenBefore = seen.has(ev.id);
      seen.set(ev.id, true);
    }
    // Counter ids repeat across sessions: index them under the session.
    this.streamIndex.set(`${sessionId ?? ''}\u0000${ev.id}`, streamId);
    const parsed = parseEventId(ev.id);
    const attrs: Attrs = {
      [ATTR_SSE_EVENT_ID]: ev.id,
      [ATTR_SSE_EVENT_SEQ]: parsed.seq,
      [ATTR_SSE_EVENT_SEQ_SOURCE]: parsed.source,
      [ATTR_SSE_STREAM_ID]: streamId,
      [ATTR_SSE_PAYLOAD_DIGEST]: payloadDigest(ev.data),
      [ATTR_SSE_PAYLOAD_BYTES]: Buffer.byteLength(ev.data, 'utf8'),
      [ATTR_JSONRPC_KIND]: info.kind,
      [ATTR_JSONRPC_REQUEST_ID]: info.id,
      [ATTR_MCP_METHOD_NAME]: info.method,
      [ATTR_PROGRESS_TOKEN]: info.progressToken,
      [ATTR_CLIENT_SEEN_BEFORE]: seenBefore,
      ...this.incarnationAttrs(sessionId),
    };
    if (ev.data.length === 0) return this.emitEvent(sessionId, attrs, 'no_payload', ctx);
    // The SDK delivers only `message` events with valid JSON-RPC; others cannot be awaited.
    if (!channel.attached || info.kind === 'none' || (ev.event !== 'message' && ev.event !== '')) {
      return this.emitEvent(sessionId, attrs, undefined, ctx);
    }
    if (channel.pending.length >= this.maxPending) {
      const oldest = channel.pending.shift()!;
      this.decide(oldest, 'dropped');
    }
    channel.pending.push({ streamId, sessionId, info, attrs, ctx, deadline: Date.now() + this.deliveryTimeoutMs, decided: false });
    this.armSweep(channel);
  }

  private emitEvent(sessionId: string | undefined, attrs: Attrs, delivery: Delivery | undefined, ctx: Context): void {
    this.emitter.emit(SPAN_SSE_EVENT, sessionId, { ...attrs, [ATTR_CLIENT_DELIVERY]: delivery }, ctx);
  }

  private decide(p: PendingEvent, delivery: Delivery): void {
    if (p.decided) return;
    p.decided = true;
    this.emitEvent(p.sessionId, p.attrs, delivery, p.ctx);
  }

  /**
   * Emits now what waits on a timer: held-back requests (as still unanswered) and wire events
   * whose delivery is undecided (without a delivery verdict, never as `dropped`: the process is
   * leaving, not the SDK dropping them). Never throws.
   */
  flush(): void {
    try {
      for (const channel of this.armed) {
        if (channel.timer) clearTimeout(channel.timer);
        channel.timer = undefined;
        for (const p of channel.pending) {
          if (p.decided) continue;
          p.decided = true;
          this.emitEvent(p.sessionId, p.attrs, undefined, p.ctx);
        }
        channel.pending.length = 0;
      }
      this.armed.clear();
      this.heldRequests.flush();
    } catch (err) {
      this.hookFailures++;
      this.log.debug('flush failed', err);
    }
  }

  private armSweep(channel: Channel): void {
    if (channel.timer || channel.pending.length === 0) {
      if (channel.pending.length === 0) this.armed.delete(channel);
      return;
    }
    this.armed.add(channel);
    const wait = Math.max(1, channel.pending[0]!.deadline - Date.now());
    channel.timer = setTimeout(() => {
      channel.timer = undefined;
      try {
        const now = Date.now();
        while (channel.pending.length > 0 && channel.pending[0]!.deadline <= now) this.decide(channel.pending.shift()!, 'dropped');
        this.armSweep(channel);
      } catch (err) {
        this.hookFailures++;
        this.log.debug('delivery sweep failed', err);
      }
    }, wait);
    channel.timer.unref?.();
  }

  // ---------------------------------------------------------------- delivery

  private hookOnMessage(transport: AttachableTransport, channel: Channel): void {
    let inner = transport.onmessage;
    const wrappers = new WeakMap<object, (message: unknown, extra?: unknown) => void>();
    let lastInner: unknown;
    let lastWrapper: ((message: unknown, extra?: unknown) => void) | undefined;
    let depth = 0;
    const observe = (message: unknown): void => {
      try {
        this.onDelivered(channel, message, transport.sessionId);
      } catch (err) {
        this.hookFailures++;
        this.log.debug('delivery hook failed', err);
      }
    };
    Object.defineProperty(transport, 'onmessage', {
      configurable: true,
      enumerable: true,
      get() {
        const h = inner;
        if (!h) return undefined;
        // Read on every message: the handler of the last read is answered without a lookup.
        if (h === lastInner) return lastWrapper;
        let w = wrappers.get(h);
        if (!w) {
          // Protocol.connect chains the previous handler inside its own: observe once per message.
          w = function (this: unknown, message: unknown, extra?: unknown) {
            if (depth === 0) observe(message);
            depth++;
            try {
              return h.call(this, message, extra);
            } finally {
              depth--;
            }
          };
          wrappers.set(h, w);
        }
        lastInner = h;
        lastWrapper = w;
        return w;
      },
      set(v) {
        inner = v;
      },
    });
  }

  private onDelivered(channel: Channel, message: unknown, transportSessionId: string | undefined): void {
    if (channel.pending.length === 0) return;
    const info = inspectMessage(message);
    const sid = boundedSessionId(transportSessionId, this.maxSessionIdChars);
    let idx = channel.pending.findIndex((p) => p.sessionId === sid && sameMessage(p.info, info));
    if (idx < 0) idx = channel.pending.findIndex((p) => sameMessage(p.info, info));
    if (idx < 0) return;
    const hit = channel.pending[idx]!;
    const keep: PendingEvent[] = [];
    for (let i = 0; i < channel.pending.length; i++) {
      const p = channel.pending[i]!;
      // Events of the same stream that came before the delivered one were skipped by a layer below.
      if (i < idx && p.streamId === hit.streamId) this.decide(p, 'dropped');
      else if (i !== idx) keep.push(p);
    }
    channel.pending = keep;
    this.decide(hit, 'delivered');
  }

  // ---------------------------------------------------------------- requests

  private hookRequest(client: AttachableClient, transport: AttachableTransport): void {
    const original = client.request;
    const self = this;
    /** Requests of this client being tracked (bounded by maxPendingRequests). */
    const counter = { pending: 0 };
    client.request = function (this: unknown, request: any, schema: any, options?: any) {
      let r: TrackedRequest | undefined;
      let opts = options;
      try {
        if (counter.pending < self.maxPendingRequests) {
          const next = (client as { _requestMessageId?: unknown })._requestMessageId;
          const id = typeof next === 'number' ? String(next) : undefined;
          const appToken = request?.params?._meta?.progressToken;
          const method = typeof request?.method === 'string' ? request.method : undefined;
          const tool = request?.params?.name;
          const pv = (transport as { protocolVersion?: unknown }).protocolVersion;
          const sessionId = boundedSessionId(transport.sessionId, self.maxSessionIdChars);
          const tracked: TrackedRequest = {
            at: epochNow(),
            id,
            method,
            tool: method === 'tools/call' && typeof tool === 'string' ? tool : undefined,
            token: typeof appToken === 'string' || typeof appToken === 'number' ? String(appToken) : typeof options?.onprogress === 'function' ? id : undefined,
            sessionId,
            protocolVersion: typeof pv === 'string' ? pv : undefined,
            inc: self.incarnationOf_(sessionId),
            ctx: context.active(),
            progressCount: 0,
            sentEmitted: false,
          };
          if (typeof options?.onprogress === 'function') {
            const onprogress = options.onprogress;
            opts = { ...options, onprogress: (p: unknown) => { tracked.progressCount++; return onprogress(p); } };
          }
          r = tracked;
          counter.pending++;
          // initialize marks a new life for the correlator: never held back.
          if (self.requestSpanDelayMs <= 0 || method === 'initialize') self.emitSent(tracked);
          else self.heldRequests.add(tracked);
        }
      } catch (err) {
        self.hookFailures++;
        self.log.debug('request hook failed', err);
      }
      let result: Promise<unknown>;
      try {
        result = original.call(this, request, schema, opts);
      } catch (err) {
        if (r) {
          counter.pending--;
          self.heldRequests.delete(r);
        }
        throw err;
      }
      if (r) {
        const s = r;
        result.then(
          () => self.settle(s, 'answered', counter, transport),
          (err: unknown) => self.settle(s, classify(err, options?.signal, forkOf(client) ?? forkOf(transport)), counter, transport),
        );
      }
      return result;
    } as AttachableClient['request'];
  }

  /** A hooked request stopped waiting: its spans, unless it was answered while held back. Never throws. */
  private settle(s: TrackedRequest, outcome: Outcome, counter: { pending: number }, transport: AttachableTransport): void {
    counter.pending--;
    try {
      const held = this.heldRequests.delete(s);
      // Answered in time: it could not have been orphaned, so it costs no span.
      if (held && (outcome === 'answered' || outcome === 'error')) return;
      if (!s.sentEmitted) this.emitSent(s);
      const inc = this.incarnationOf_(s.sessionId);
      this.emitter.emit(SPAN_REQUEST_SETTLED, s.sessionId ?? boundedSessionId(transport.sessionId, this.maxSessionIdChars), {
        [ATTR_MCP_METHOD_NAME]: s.method,
        [ATTR_JSONRPC_REQUEST_ID]: s.id,
        [ATTR_PROGRESS_TOKEN]: s.token,
        [ATTR_REQUEST_OUTCOME]: outcome,
        [ATTR_REQUEST_DURATION_MS]: epochNow() - s.at,
        [ATTR_REQUEST_PROGRESS_COUNT]: s.progressCount,
        [ATTR_SESSION_INCARNATION]: inc,
        [ATTR_SESSION_INCARNATION_SOURCE]: inc ? 'server' : undefined,
      });
    } catch (err) {
      this.hookFailures++;
      this.log.debug('settle hook failed', err);
    }
  }

  /** `forkwatch.request.sent` of a hooked request, stamped with its send time. Never throws. */
  private emitSent(r: TrackedRequest): void {
    if (r.sentEmitted) return;
    r.sentEmitted = true;
    try {
      const inc = r.inc;
      this.emitter.emit(
        SPAN_REQUEST_SENT,
        r.sessionId,
        {
          [ATTR_MCP_METHOD_NAME]: r.method,
          [ATTR_JSONRPC_REQUEST_ID]: r.id,
          [ATTR_PROGRESS_TOKEN]: r.token,
          [ATTR_GEN_AI_TOOL_NAME]: r.tool,
          [ATTR_MCP_PROTOCOL_VERSION]: r.protocolVersion,
          [ATTR_SESSION_INCARNATION]: inc,
          [ATTR_SESSION_INCARNATION_SOURCE]: inc ? 'server' : undefined,
        },
        r.ctx,
        r.at,
      );
    } catch (err) {
      this.hookFailures++;
      this.log.debug('request.sent failed', err);
    }
  }

  private session(sessionId: string): SessionState {
    return this.sessions.getOrCreate(sessionId, () => ({ incarnation: undefined, seen: new BoundedMap(this.maxSeen) }));
  }

  private incarnationAttrs(sessionId: string | undefined): Attrs {
    const inc = this.incarnationOf_(sessionId);
    return inc ? { [ATTR_SESSION_INCARNATION]: inc, [ATTR_SESSION_INCARNATION_SOURCE]: 'server' } : {};
  }

  /** The incarnation held for an (already bounded) session id. */
  private incarnationOf_(sessionId: string | undefined): string | undefined {
    return sessionId ? this.sessions.get(sessionId)?.incarnation : undefined;
  }
}

/**
 * The observer of one SSE response body, and its parser: one object per response (closures and
 * a separate parser per request were garbage on the host's hot path). Only events with an id are
 * assembled (the others are never recorded).
 */
class SseTap extends SseParser implements BodyObserver {
  streamId: string | undefined;

  constructor(
    private readonly handler: (tap: SseTap, text: string) => void,
    maxEventChars: number,
    readonly channel: Channel,
    readonly req: OutgoingRequest,
    readonly infos: JsonRpcInfo[],
    readonly sessionId: string | undefined,
    readonly presented: string | undefined,
    readonly lastEventId: string | undefined,
    readonly ctx: Context,
  ) {
    super(maxEventChars, true);
  }

  text(t: string): void {
    this.handler(this, t);
  }

  end(): void {}
}

/** Why a request stopped waiting, from what it was rejected with. */
function classify(err: unknown, signal: AbortSignal | undefined, fork: { kind: string } | undefined): Outcome {
  if (isSessionForkError(err)) return err.kind === 'session_not_found' ? 'failed_session_lost' : 'failed_fork';
  if (signal?.aborted) return 'cancelled';
  if (fork) return fork.kind === 'session_not_found' ? 'failed_session_lost' : 'failed_fork';
  if (err instanceof McpError) {
    const data = err.data as Record<string, unknown> | undefined;
    if (err.code === ErrorCode.RequestTimeout && data && typeof data === 'object' && ('timeout' in data || 'maxTotalTimeout' in data)) return 'timeout';
    if (err.code === ErrorCode.ConnectionClosed && /Connection closed/.test(err.message)) return 'transport_error';
    return 'error';
  }
  if (err instanceof Error && err.name === 'ZodError') return 'error';
  return 'transport_error';
}

/** Creates the client instrumentation; see {@link ClientInstrumentationOptions} for defaults. */
export function createClientInstrumentation(options: ClientInstrumentationOptions = {}): ClientInstrumentation {
  return new ClientInstrumentation(options);
}
