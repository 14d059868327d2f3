import type { DiagLogger, TracerProvider } from '@opentelemetry/api';
import {
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_JSONRPC_KIND,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_OBSERVER,
  ATTR_PROGRESS_TOKEN,
  ATTR_REQUEST_ARGS_DIGEST,
  ATTR_REQUEST_DURATION_MS,
  ATTR_REQUEST_OUTCOME,
  ATTR_REQUEST_STREAM_CLOSED,
  ATTR_RESUME_LAST_EVENT_FOUND,
  ATTR_RESUME_LAST_EVENT_ID,
  ATTR_RESUME_OUTCOME,
  ATTR_SESSION_CLIENT_SUPPLIED_ID,
  ATTR_SESSION_CREATED_BY,
  ATTR_SESSION_END_REASON,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  ATTR_SSE_EVENT_ID,
  ATTR_SSE_EVENT_SEQ,
  ATTR_SSE_EVENT_SEQ_SOURCE,
  ATTR_SSE_PAYLOAD_BYTES,
  ATTR_SSE_PAYLOAD_DIGEST,
  ATTR_SSE_REPLAYED,
  ATTR_SSE_STREAM_ID,
  OBSERVER_PROXY,
  SPAN_REQUEST_HANDLED,
  SPAN_REQUEST_RECEIVED,
  SPAN_REQUEST_SETTLED,
  SPAN_RESUME,
  SPAN_SESSION_CREATED,
  SPAN_SESSION_ENDED,
  SPAN_SSE_EVENT,
  SpanEmitter,
  type EventSlot,
  digestHex,
  type JsonRpcInfo,
  type ResumeOutcome,
} from './building-blocks.js';
import type { EventOrigin } from './event-history.js';
import type { PendingResume, ProxySession } from './session-table.js';
import type { StatelessDetails } from './stateless-calls.js';

/** Why the proxy saw a session end: the client's DELETE, or the upstream answering 404 for it. */
export type ProxyEndReason = 'closed_by_client' | 'not_found_upstream';

/**
 * The server-side spans of docs/telemetry.md, emitted from what crossed the proxy, each marked
 * `forkwatch.observer=proxy`. Incarnations are the proxy's: source `server` under `--guard` (they
 * are sent on the wire), else `observed`.
 */
export class WireSpans {
  private readonly emitter: SpanEmitter;
  private readonly source: 'server' | 'observed';

  constructor(opts: { tracerProvider?: TracerProvider; salt: string; recordRawSessionId: boolean; guard: boolean; logger: DiagLogger }) {
    this.emitter = new SpanEmitter({ side: 'server', ...opts, guarded: opts.guard });
    this.source = opts.guard ? 'server' : 'observed';
  }

  /** Spans that could not be emitted. */
  get failures(): number {
    return this.emitter.failures;
  }

  private inc(s: ProxySession): Record<string, string> {
    return { [ATTR_OBSERVER]: OBSERVER_PROXY, [ATTR_SESSION_INCARNATION]: s.incarnation, [ATTR_SESSION_INCARNATION_SOURCE]: this.source };
  }

  created(s: ProxySession, cause: { createdBy: string; clientSupplied: boolean; method: string; lastEventId?: string; protocolVersion?: string }, at?: number): void {
    this.emitter.emit(
      SPAN_SESSION_CREATED,
      s.id,
      {
        ...this.inc(s),
        [ATTR_SESSION_CREATED_BY]: cause.createdBy,
        [ATTR_SESSION_CLIENT_SUPPLIED_ID]: cause.clientSupplied,
        [ATTR_RESUME_LAST_EVENT_ID]: cause.lastEventId,
        [ATTR_HTTP_REQUEST_METHOD]: cause.method,
        [ATTR_MCP_PROTOCOL_VERSION]: cause.protocolVersion,
      },
      undefined,
      at,
    );
  }

  ended(s: ProxySession, reason: ProxyEndReason): void {
    this.emitter.emit(SPAN_SESSION_ENDED, s.id, { ...this.inc(s), [ATTR_SESSION_END_REASON]: reason });
  }

  resume(s: ProxySession, r: PendingResume, outcome: ResumeOutcome, lastEventFound: boolean | undefined): void {
    this.emitter.emit(
      SPAN_RESUME,
      s.id,
      {
        ...this.inc(s),
        [ATTR_RESUME_LAST_EVENT_ID]: r.lastEventId,
        [ATTR_HTTP_REQUEST_METHOD]: r.method,
        [ATTR_HTTP_RESPONSE_STATUS_CODE]: r.status,
        [ATTR_RESUME_OUTCOME]: outcome,
        [ATTR_RESUME_LAST_EVENT_FOUND]: lastEventFound,
        [ATTR_MCP_PROTOCOL_VERSION]: r.protocolVersion,
      },
      undefined,
      r.at,
    );
  }

  /** A resume of a session the proxy does not track (or no session at all): status only. */
  resumeUntracked(sessionId: string | undefined, r: PendingResume, outcome: ResumeOutcome): void {
    this.emitter.emit(
      SPAN_RESUME,
      sessionId,
      {
        [ATTR_OBSERVER]: OBSERVER_PROXY,
        [ATTR_RESUME_LAST_EVENT_ID]: r.lastEventId,
        [ATTR_HTTP_REQUEST_METHOD]: r.method,
        [ATTR_HTTP_RESPONSE_STATUS_CODE]: r.status,
        [ATTR_RESUME_OUTCOME]: outcome,
        [ATTR_MCP_PROTOCOL_VERSION]: r.protocolVersion,
      },
      undefined,
      r.at,
    );
  }

  /** One `forkwatch.sse.event`, stamped with when it passed, in the incarnation it passed in. */
  event(s: ProxySession | undefined, sessionId: string | undefined, e: EventSlot): void {
    const origin = e.origin as EventOrigin | undefined;
    const inc = origin?.incarnation;
    this.emitter.emit(
      SPAN_SSE_EVENT,
      sessionId,
      {
        [ATTR_OBSERVER]: OBSERVER_PROXY,
        [ATTR_SESSION_INCARNATION]: s !== undefined ? inc : undefined,
        [ATTR_SESSION_INCARNATION_SOURCE]: s !== undefined && inc !== undefined ? this.source : undefined,
        [ATTR_SSE_EVENT_ID]: e.id,
        [ATTR_SSE_EVENT_SEQ]: e.seq,
        [ATTR_SSE_EVENT_SEQ_SOURCE]: e.seqSource,
        [ATTR_SSE_STREAM_ID]: e.streamId,
        [ATTR_SSE_REPLAYED]: e.flag,
        [ATTR_SSE_PAYLOAD_DIGEST]: digestHex(e),
        [ATTR_SSE_PAYLOAD_BYTES]: e.bytes,
        [ATTR_JSONRPC_KIND]: e.kind,
        [ATTR_JSONRPC_REQUEST_ID]: e.rpcId,
        [ATTR_MCP_METHOD_NAME]: e.method,
        [ATTR_PROGRESS_TOKEN]: e.token,
        [ATTR_MCP_PROTOCOL_VERSION]: origin?.protocolVersion,
      },
      undefined,
      e.at,
    );
  }

  /** `stateless`: the stateless request's argument digest and trace (the client's when it sent one). */
  received(s: ProxySession | undefined, sessionId: string | undefined, info: JsonRpcInfo, protocolVersion: string | undefined, at: number, stateless?: StatelessDetails): void {
    this.emitter.emit(
      SPAN_REQUEST_RECEIVED,
      sessionId,
      {
        ...(s ? this.inc(s) : { [ATTR_OBSERVER]: OBSERVER_PROXY }),
        [ATTR_MCP_METHOD_NAME]: info.method,
        [ATTR_JSONRPC_REQUEST_ID]: info.id,
        [ATTR_PROGRESS_TOKEN]: info.progressToken,
        [ATTR_GEN_AI_TOOL_NAME]: info.toolName,
        [ATTR_MCP_PROTOCOL_VERSION]: protocolVersion,
        [ATTR_REQUEST_ARGS_DIGEST]: stateless?.digest,
      },
      stateless?.ctx,
      at,
    );
  }

  /**
   * `forkwatch.request.settled` for a sessionful request whose response stream broke before its
   * answer, that no stream of the session answered since, and that the client then cancelled
   * (`notifications/cancelled`): outcome `cancelled`, `stream_closed=true`, stamped when the
   * cancel passed. What the client did, as the wire showed it; the detector lets the client's own
   * settle, when it has one, say how the app stopped waiting.
   */
  settledCancelled(sessionId: string, info: JsonRpcInfo, protocolVersion: string | undefined, receivedAt: number, at: number): void {
    this.emitter.emit(
      SPAN_REQUEST_SETTLED,
      sessionId,
      {
        [ATTR_OBSERVER]: OBSERVER_PROXY,
        [ATTR_MCP_METHOD_NAME]: info.method,
        [ATTR_JSONRPC_REQUEST_ID]: info.id,
        [ATTR_PROGRESS_TOKEN]: info.progressToken,
        [ATTR_GEN_AI_TOOL_NAME]: info.toolName,
        [ATTR_MCP_PROTOCOL_VERSION]: protocolVersion,
        [ATTR_REQUEST_OUTCOME]: 'cancelled',
        [ATTR_REQUEST_STREAM_CLOSED]: true,
        [ATTR_REQUEST_DURATION_MS]: Math.max(0, at - receivedAt),
      },
      undefined,
      at,
    );
  }

  /**
   * `forkwatch.request.settled` for a sessionful request whose `request.received` went out (late,
   * or on a broken stream) and whose answer then crossed the proxy without an event to record it
   * (a JSON answer, an SSE event without id): outcome `answered` or `error`, stamped when it passed.
   * Without it a later session end would read as "ended before answering".
   */
  settledAnswered(sessionId: string, info: JsonRpcInfo, protocolVersion: string | undefined, receivedAt: number, outcome: 'answered' | 'error', at: number): void {
    this.emitter.emit(
      SPAN_REQUEST_SETTLED,
      sessionId,
      {
        [ATTR_OBSERVER]: OBSERVER_PROXY,
        [ATTR_MCP_METHOD_NAME]: info.method,
        [ATTR_JSONRPC_REQUEST_ID]: info.id,
        [ATTR_PROGRESS_TOKEN]: info.progressToken,
        [ATTR_GEN_AI_TOOL_NAME]: info.toolName,
        [ATTR_MCP_PROTOCOL_VERSION]: protocolVersion,
        [ATTR_REQUEST_OUTCOME]: outcome,
        [ATTR_REQUEST_DURATION_MS]: Math.max(0, at - receivedAt),
      },
      undefined,
      at,
    );
  }

  /**
   * `forkwatch.request.handled` for a stateless request whose response stream ended before its
   * answer: `stream_closed=true`. No `handler_outcome`: the wire does not show how the handler
   * ended. Stamped when the stream broke (the end the re-issue window counts from).
   */
  handledStreamClosed(info: JsonRpcInfo, stateless: StatelessDetails, brokeAt: number): void {
    this.emitter.emit(
      SPAN_REQUEST_HANDLED,
      undefined,
      {
        [ATTR_OBSERVER]: OBSERVER_PROXY,
        [ATTR_MCP_METHOD_NAME]: info.method,
        [ATTR_JSONRPC_REQUEST_ID]: info.id,
        [ATTR_GEN_AI_TOOL_NAME]: info.toolName,
        [ATTR_REQUEST_ARGS_DIGEST]: stateless.digest,
        [ATTR_REQUEST_STREAM_CLOSED]: true,
      },
      stateless.ctx,
      brokeAt,
    );
  }
}
