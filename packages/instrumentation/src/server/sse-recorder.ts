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
import { parseEventId } from '../common/incarnation.js';
import { describeText } from '../common/jsonrpc-info.js';
import { payloadDigest } from '../common/session-key.js';
import type { SpanEmitter } from '../common/span-emitter.js';
import type { SseEvent } from '../common/sse-parser.js';
import type { Attrs, TransportState } from './internal-types.js';
import { otelContextOf, rootOf, type RequestContext } from './request-context.js';
import { resumeOutcome } from './resume-outcome.js';
import { bornDuring } from './session-attribution.js';
import type { ServerEmitters } from './server-emitters.js';

/** The SDK's stream id of the standalone GET stream. */
const STANDALONE_STREAM_ID = '_GET_stream';

/** What a transport sent on its SSE streams (`forkwatch.sse.event`), and resumes (`forkwatch.resume`). */
export class SseRecorder {
  constructor(private readonly emitters: ServerEmitters) {}

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
    this.emitters.of(state).emit(
      SPAN_SSE_EVENT,
      state.transport.sessionId,
      {
        ...this.emitters.incarnationAttrs(state),
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
  }
}
