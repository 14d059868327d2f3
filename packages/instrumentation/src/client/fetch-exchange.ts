import { context, type Context } from '@opentelemetry/api';
import {
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_PROGRESS_TOKEN,
  ATTR_RESUME_ANSWERED_SESSION_KEY,
  ATTR_RESUME_LAST_EVENT_ID,
  ATTR_RESUME_OUTCOME,
  ATTR_RESUME_PREVIOUS_INCARNATION,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  HEADER_LAST_EVENT_ID,
  HEADER_PROTOCOL_VERSION,
  HEADER_SESSION_ID,
  HEADER_SESSION_INCARNATION,
  SPAN_REQUEST_SENT,
  SPAN_RESUME,
} from '../semconv.js';
import { describeText, type JsonRpcInfo } from '../common/jsonrpc-info.js';
import { SseParser } from '../common/sse-parser.js';
import type { ClientCore } from './client-core.js';
import type { DeliveryTracker } from './delivery-tracker.js';
import { boundedSessionId, mayHaveBody, mediaType, readRequest, withBody, type OutgoingRequest } from './http-message.js';
import { inspectMessage } from './inspect-message.js';
import type { Channel, SessionState, StreamTap } from './internal-types.js';
import { observeBody, observeBodyInPlace, type BodyObserver } from './observe-body.js';
import { TraceContextInjector } from './trace-context-injector.js';
import type { FetchLike } from './types.js';

/** Shared empty result for requests without a JSON-RPC body (never mutated). */
const NO_INFOS: JsonRpcInfo[] = [];

/**
 * The HTTP side of the client: one fetch through a wrapped channel, its request spans (when no
 * hooked client records them), its resume span, and taps on the response body for SSE events and
 * the InitializeResult's incarnation. Bytes pass through unchanged and unbuffered.
 */
export class FetchExchange {
  private readonly injector = new TraceContextInjector();

  constructor(
    private readonly core: ClientCore,
    private readonly delivery: DeliveryTracker,
  ) {}

  /**
   * One fetch through `channel`. A promise chain, not an async function: under a context manager
   * that enables Node's promise hooks (NodeSDK's AsyncLocalStorage), each promise of the host
   * process pays them, and an async function with an await made two per call where `then` makes one.
   * A synchronous throw of `inner` is returned as a rejection, as the async function did.
   */
  fetchThrough(channel: Channel, inner: FetchLike, input: string | URL | Request, init: RequestInit | undefined): Promise<Response> {
    const ctx = context.active();
    let seen: OutgoingRequest | undefined;
    let infos: JsonRpcInfo[] = NO_INFOS;
    let callInit = init;
    try {
      seen = readRequest(input, init);
      // With a hooked client the body is parsed only if an answer needs it (lazily, in onResponse).
      if (seen.method === 'POST' && seen.body !== undefined && !channel.requestsByClient) infos = describeText(seen.body, this.core.maxParseChars);
      if (this.core.injectTraceContext) {
        const injected = this.injector.inject(ctx, seen.headers);
        if (injected) {
          seen.headers = injected;
          callInit = { ...init, headers: injected };
        }
      }
      if (!channel.requestsByClient) this.onRequests(seen, infos, ctx);
    } catch (err) {
      this.core.fail('request hook', err);
    }
    let pending: Promise<Response>;
    try {
      pending = Promise.resolve(inner(input, callInit));
    } catch (err) {
      return Promise.reject(err);
    }
    if (!seen) return pending;
    const req = seen;
    return pending.then((response) => {
      try {
        return this.onResponse(channel, req, infos, response, ctx);
      } catch (err) {
        this.core.fail('response hook', err);
        return response;
      }
    });
  }

  private onRequests(req: OutgoingRequest, infos: JsonRpcInfo[], ctx: Context): void {
    if (infos.length === 0) return;
    const core = this.core;
    const sessionId = boundedSessionId(req.headers.get(HEADER_SESSION_ID), core.maxSessionIdChars);
    const protocol = req.headers.get(HEADER_PROTOCOL_VERSION) ?? undefined;
    const inc = core.incarnationOf(sessionId);
    for (const info of infos) {
      if (info.kind !== 'request') continue;
      core.emitter.emit(
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
    if (infos === NO_INFOS && req.method === 'POST' && req.body !== undefined) return describeText(req.body, this.core.maxParseChars);
    return infos;
  }

  /**
   * Id of the first message of a request body that has one. A single message that was not parsed
   * (a hooked client's, every call) is read by one pass of the scanner: JSON.parse of the body
   * built every key and string of the call's arguments (internalized) to name one stream.
   */
  private firstIdOf(req: OutgoingRequest, infos: JsonRpcInfo[]): string | undefined {
    if (infos === NO_INFOS && req.method === 'POST' && req.body !== undefined && !isBatch(req.body)) return this.core.scanner.scan(req.body).id;
    return this.infosOf(req, infos).find((i) => i.id !== undefined)?.id;
  }

  private onResponse(channel: Channel, req: OutgoingRequest, parsed: JsonRpcInfo[], res: Response, ctx: Context): Response {
    const core = this.core;
    const presented = boundedSessionId(req.headers.get(HEADER_SESSION_ID), core.maxSessionIdChars);
    const answered = boundedSessionId(res.headers.get(HEADER_SESSION_ID), core.maxSessionIdChars);
    const sessionId = answered ?? presented;
    const incHeader = res.headers.get(HEADER_SESSION_INCARNATION) ?? undefined;
    const incAnswered = incHeader && incHeader.length <= 256 ? incHeader : undefined;
    const lastEventId = req.headers.get(HEADER_LAST_EVENT_ID) ?? undefined;
    const previous = sessionId ? core.sessions.get(sessionId)?.incarnation : undefined;
    // Moments: a reconnect with Last-Event-ID, an answer under another session id or incarnation.
    const otherId = answered !== undefined && presented !== undefined && answered !== presented;
    if (lastEventId !== undefined || otherId || (incAnswered !== undefined && previous !== undefined && incAnswered !== previous)) {
      this.delivery.moment(presented, true);
      if (otherId) this.delivery.moment(answered, true);
    }
    if (lastEventId !== undefined) {
      const idChanged = answered !== undefined && presented !== undefined && answered !== presented;
      const incChanged = incAnswered !== undefined && previous !== undefined && incAnswered !== previous;
      const s = res.status;
      const outcome =
        s === 404 || s === 410 ? 'rejected_404' : s === 409 ? 'rejected_gap' : s >= 200 && s < 300 ? (idChanged || incChanged ? 'forked' : 'resumed') : 'rejected_other';
      core.emitter.emit(
        SPAN_RESUME,
        presented,
        {
          [ATTR_RESUME_LAST_EVENT_ID]: lastEventId,
          [ATTR_HTTP_REQUEST_METHOD]: req.method,
          [ATTR_HTTP_RESPONSE_STATUS_CODE]: s,
          [ATTR_SESSION_INCARNATION]: incAnswered,
          [ATTR_SESSION_INCARNATION_SOURCE]: incAnswered ? 'server' : undefined,
          [ATTR_RESUME_PREVIOUS_INCARNATION]: previous,
          [ATTR_RESUME_ANSWERED_SESSION_KEY]: idChanged ? core.emitter.key(answered) : undefined,
          [ATTR_RESUME_OUTCOME]: outcome,
        },
        ctx,
      );
    }
    if (sessionId && incAnswered && res.ok) core.session(sessionId).incarnation = incAnswered;
    if (!res.body || !mayHaveBody(res.status) || !res.ok) return res;
    const type = mediaType(res.headers.get('content-type'));
    if (type === 'text/event-stream') {
      // The Response itself stays untouched (a changed prototype or a new Response cost the SDK's
      // hot paths more than the tap): its body's read methods are hooked, and `text()` and the
      // other body methods read through them too.
      observeBodyInPlace(res.body, new SseTap(this.sseText, core.maxEventChars, channel, req, parsed, sessionId, presented, lastEventId, ctx));
      return res;
    }
    // Only an InitializeResult carries an incarnation (inspectMessage): other JSON answers pass untouched.
    if (type === 'application/json' && sessionId && this.infosOf(req, parsed).some((i) => i.method === 'initialize')) {
      let text = '';
      let over = false;
      const body = observeBody(res.body, {
        text: (t) => {
          if (over) return;
          if (text.length + t.length > core.maxParseChars) {
            over = true;
            text = '';
          } else text += t;
        },
        end: () => {
          if (over || text.length === 0) return;
          const parsed: unknown = JSON.parse(text);
          for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
            const inc = inspectMessage(m).incarnation;
            if (inc) core.session(sessionId).incarnation = inc;
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
      if (ev.id === undefined) continue;
      this.streamIdOf(tap);
      this.delivery.onSseEvent(tap.channel, ev, tap.sessionId, tap, tap.ctx);
    }
    this.core.oversized += tap.oversized;
    tap.oversized = 0;
  };

  /** Named at the first event with an id: most answers of servers without an event store have none. */
  private streamIdOf(tap: SseTap): string {
    if (tap.streamId !== undefined) return tap.streamId;
    const req = tap.req;
    let name: string;
    if (req.method === 'POST') {
      const firstId = this.firstIdOf(req, tap.infos);
      name = `post:${firstId ?? ''}`;
    } else {
      name = tap.lastEventId !== undefined ? (this.core.streamOf(tap.presented, tap.lastEventId) ?? 'get') : 'get';
    }
    tap.streamId = name;
    return name;
  }
}

/** The text is a JSON array (a batch): its first char other than JSON whitespace is `[`. */
function isBatch(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return c === 91;
  }
  return false;
}

/**
 * The observer of one SSE response body, and its parser: one object per response (closures and
 * a separate parser per request were garbage on the host's hot path). Only events with an id are
 * assembled (the others are never recorded).
 */
class SseTap extends SseParser implements BodyObserver, StreamTap {
  streamId: string | undefined;
  serial = -1;
  serialOwner: SessionState | undefined;

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
