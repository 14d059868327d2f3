import {
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
  ATTR_SSE_EVENT_ID,
  ATTR_SSE_EVENT_SEQ,
  ATTR_SSE_EVENT_SEQ_SOURCE,
  ATTR_SSE_PAYLOAD_BYTES,
  ATTR_SSE_PAYLOAD_DIGEST,
  ATTR_SSE_REPLAYED,
  ATTR_SSE_STREAM_ID,
  SPAN_RESUME,
  SPAN_SSE_EVENT,
} from '../semconv.js';
import { epochNow } from '../common/deferred-requests.js';
import { digestHex, digestInto, EventRing, type EventRingStore, type EventSlot } from '../common/event-ring.js';
import { hashId } from '../common/id-table.js';
import { parseEventId } from '../common/incarnation.js';
import { MessageScanner } from '../common/scan-message.js';
import { detach } from '../common/own-string.js';
import type { SpanEmitter } from '../common/span-emitter.js';
import type { SseEvent } from '../common/sse-parser.js';
import { DEFAULT_MAX_PARSE_CHARS } from '../common/jsonrpc-info.js';
import type { Attrs, TransportState } from './internal-types.js';
import { otelContextOf, rootOf, type RequestContext } from './request-context.js';
import { resumeOutcome } from './resume-outcome.js';
import { bornDuring } from './session-attribution.js';
import type { ServerEmitters } from './server-emitters.js';
import type { SessionEndReason } from './types.js';

/** The SDK's stream id of the standalone GET stream. */
const STANDALONE_STREAM_ID = '_GET_stream';

/**
 * What a transport sent on its SSE streams (`forkwatch.sse.event`), and resumes (`forkwatch.resume`).
 * Events are kept in the incarnation's ring and emitted, with the times they were sent, only when
 * a moment happens on the session ({@link SseRecorder.moment}); from then on the incarnation's
 * events are emitted as they are sent.
 */
export class SseRecorder {
  /** Rings of incarnations that ended other than by the client's DELETE, by raw session id: a later resume or rehydration of the id emits them. */
  private readonly retired = new Map<string, TransportState[]>();
  /** Reads each recorded event's message (one scanner, refilled per event). */
  private readonly scanner: MessageScanner;

  constructor(
    private readonly emitters: ServerEmitters,
    private readonly store: EventRingStore,
    private readonly maxRetired: number,
    maxParseChars = DEFAULT_MAX_PARSE_CHARS,
  ) {
    this.scanner = new MessageScanner(maxParseChars, true);
  }

  lastEventFound(state: TransportState, ctx: RequestContext, lastEventId: string): boolean | undefined {
    // An incarnation born while this request was in flight has sent nothing it could resume.
    if (bornDuring(state, ctx)) return false;
    if (state.link) return state.link.lookup(lastEventId).found;
    return state.tracker.knows(lastEventId);
  }

  emitResume(ctx: RequestContext, status: number, sessionId: string | undefined, state: TransportState | undefined, extra: Attrs, emitter: SpanEmitter): void {
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
        ...this.emitters.incarnationAttrs(state),
        ...extra,
        [ATTR_RESUME_LAST_EVENT_ID]: ctx.lastEventId,
        [ATTR_HTTP_REQUEST_METHOD]: ctx.method,
        [ATTR_HTTP_RESPONSE_STATUS_CODE]: status,
        [ATTR_RESUME_OUTCOME]: resumeOutcome(status, createdHere),
        [ATTR_MCP_PROTOCOL_VERSION]: ctx.protocolVersion,
      },
      otelContextOf(ctx),
    );
  }

  onSseEvent(state: TransportState, ctx: RequestContext, ev: SseEvent): void {
    if (ev.id === undefined) return;
    const id = ev.id;
    const parsed = parseEventId(id);
    const hash = hashId(id);
    const known = state.tracker.get(hash);
    let seq: number | undefined;
    let seqSource: string | undefined;
    if (parsed.seq !== undefined) {
      seq = parsed.seq;
      seqSource = parsed.source;
    } else {
      seq = known ?? state.tracker.nextObservedSeq();
      seqSource = 'observed';
    }
    // Kept whether or not spans are recorded: a resume's last_event_found is answered from it.
    state.tracker.add(hash, seq);
    const emitter = this.emitters.of(state);
    if (!emitter.enabled) return;
    let streamId = state.link?.streamIdOf(id);
    if (streamId === undefined && ctx.method === 'GET' && ctx.lastEventId === undefined) streamId = STANDALONE_STREAM_ID;
    const ring = (state.ring ??= new EventRing());
    const slot = this.store.next(ring);
    slot.id = detach(id);
    slot.seq = seq;
    slot.seqSource = seqSource;
    slot.streamId = streamId;
    slot.flag = known !== undefined;
    slot.at = epochNow();
    slot.origin = ctx;
    // Digested and read only if a moment emits it (most slots are reused unread), while the
    // store's text budget lasts; past it, now.
    // Read now while a request whose received span went out awaits its answer: that answer is a
    // moment (HeldRequests.emit), the session's end may follow before any other.
    const awaiting = state.awaiting !== undefined && state.awaiting.size > 0 ? state.awaiting : undefined;
    if (awaiting !== undefined || !this.store.keepText(slot, ev.data)) this.read(slot, ev.data);
    const answers = awaiting !== undefined && (slot.kind === 'response' || slot.kind === 'error') && slot.rpcId !== undefined && awaiting.delete(slot.rpcId);
    if (state.hot || answers) this.flush(state);
  }

  /** Digests and reads an event's payload into its slot. */
  private read(slot: EventSlot, data: string): void {
    digestInto(slot, data);
    const m = this.scanner.scan(data);
    slot.kind = m.kind;
    slot.rpcId = m.id;
    slot.method = m.method;
    slot.token = m.method === 'notifications/progress' ? m.progressToken : undefined;
  }

  /**
   * A moment on `state`'s session (a resume, a request answered under another session id, a
   * session created by something other than initialize): its buffered events and those of earlier
   * incarnations under `sessionId` are emitted, and its later events as they are sent.
   */
  moment(state: TransportState | undefined, sessionId: string | undefined): void {
    if (sessionId !== undefined) this.flushRetired(sessionId);
    if (state === undefined) return;
    state.hot = true;
    this.flush(state);
  }

  /** Emits `state`'s buffered events, oldest first, stamped with the times they were sent. */
  flush(state: TransportState): void {
    const ring = state.ring;
    if (ring === undefined || ring.slots.length === 0) return;
    const emitter = this.emitters.of(state);
    const sessionId = state.transport.sessionId ?? state.sessionId;
    const inc = this.emitters.incarnationAttrs(state);
    this.store.forEach(ring, (slot) => this.emitSlot(emitter, sessionId, inc, slot));
    this.store.release(ring);
  }

  /** The incarnation ended: its buffer is dropped if the client closed it, kept for a later moment otherwise. */
  retire(state: TransportState, reason: SessionEndReason): void {
    const ring = state.ring;
    if (ring === undefined || ring.slots.length === 0) return;
    const sessionId = state.sessionId ?? state.transport.sessionId;
    if (reason === 'closed_by_client' || sessionId === undefined) {
      this.store.release(ring);
      return;
    }
    let list = this.retired.get(sessionId);
    if (list === undefined) {
      if (this.retired.size >= this.maxRetired) {
        const [oldestId, oldest] = this.retired.entries().next().value as [string, TransportState[]];
        this.retired.delete(oldestId);
        for (const s of oldest) if (s.ring) this.store.release(s.ring);
      }
      list = [];
      this.retired.set(sessionId, list);
    }
    list.push(state);
  }

  private flushRetired(sessionId: string): void {
    const list = this.retired.get(sessionId);
    if (list === undefined) return;
    this.retired.delete(sessionId);
    for (const s of list) this.flush(s);
  }

  private emitSlot(emitter: SpanEmitter, sessionId: string | undefined, inc: Attrs, slot: EventSlot): void {
    const text = this.store.takeText(slot);
    if (text !== undefined) this.read(slot, text);
    const digest = digestHex(slot);
    const bytes = slot.bytes;
    const ctx = slot.origin as RequestContext;
    emitter.emit(
      SPAN_SSE_EVENT,
      sessionId,
      {
        ...inc,
        [ATTR_SSE_EVENT_ID]: slot.id,
        [ATTR_SSE_EVENT_SEQ]: slot.seq,
        [ATTR_SSE_EVENT_SEQ_SOURCE]: slot.seqSource,
        [ATTR_SSE_STREAM_ID]: slot.streamId,
        [ATTR_SSE_REPLAYED]: slot.flag,
        [ATTR_SSE_PAYLOAD_DIGEST]: digest,
        [ATTR_SSE_PAYLOAD_BYTES]: bytes,
        [ATTR_JSONRPC_KIND]: slot.kind,
        [ATTR_JSONRPC_REQUEST_ID]: slot.rpcId,
        [ATTR_MCP_METHOD_NAME]: slot.method,
        [ATTR_PROGRESS_TOKEN]: slot.token,
        [ATTR_MCP_PROTOCOL_VERSION]: rootOf(ctx).protocolVersion ?? ctx.protocolVersion,
      },
      otelContextOf(ctx),
      slot.at,
    );
    slot.origin = undefined;
  }
}
