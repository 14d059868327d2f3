import { context, propagation, type Context, type DiagLogger } from '@opentelemetry/api';
import {
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_PROGRESS_TOKEN,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  ATTR_REQUEST_DURATION_MS,
  ATTR_REQUEST_OUTCOME,
  HEADER_PROTOCOL_VERSION,
  SPAN_REQUEST_RECEIVED,
  SPAN_REQUEST_SETTLED,
} from '../semconv.js';
import { DeferredRequests, epochNow } from '../common/deferred-requests.js';
import type { JsonRpcInfo } from '../common/jsonrpc-info.js';
import { safeExecute } from '../common/safe-execute.js';
import type { HeldRequest, TransportState } from './internal-types.js';
import type { ServerEmitters } from './server-emitters.js';
import type { SseRecorder } from './sse-recorder.js';

/**
 * `forkwatch.request.received`: a request answered within `requestSpanDelayMs` emits nothing (it
 * cannot be orphaned); one unanswered then, or when its session ends, is emitted with its arrival time.
 */
export class HeldRequests {
  private readonly deferred: DeferredRequests<HeldRequest>;

  constructor(
    private readonly emitters: ServerEmitters,
    logger: DiagLogger,
    private readonly requestSpanDelayMs: number,
    /** Requests held per incarnation; past it they are emitted at once. */
    private readonly maxHeld: number,
    private readonly sse: SseRecorder,
  ) {
    this.deferred = new DeferredRequests<HeldRequest>(requestSpanDelayMs, (held) => {
      safeExecute(logger, 'request.received', () => {
        if (held.info.id !== undefined) held.state.unanswered.delete(held.info.id);
        // A request outliving the delay is a moment: the session's recent events go out with it.
        this.sse.flush(held.state);
        this.emit(held);
      });
    });
  }

  /** A request arrived on `state` (onmessage). */
  received(state: TransportState, info: JsonRpcInfo, extra: unknown): void {
    // Nothing to hold for a tracer that records nothing (no SDK registered).
    if (!this.emitters.of(state).enabled) return;
    const headers = (extra as { requestInfo?: { headers?: Record<string, string> } } | undefined)?.requestInfo?.headers;
    const held: HeldRequest = { at: epochNow(), state, info, headers };
    if (this.requestSpanDelayMs <= 0 || info.id === undefined || info.method === 'initialize' || state.unanswered.size >= this.maxHeld) {
      this.emit(held);
      return;
    }
    state.unanswered.set(info.id, held);
    this.deferred.add(held);
  }

  /** A response or error leaving for a held request: answered in time, no span. */
  onSend(state: TransportState, message: unknown): void {
    if (state.unanswered.size === 0 || message === null || typeof message !== 'object') return;
    const m = message as { id?: unknown; result?: unknown; error?: unknown };
    if (m.id === undefined || (m.result === undefined && m.error === undefined)) return;
    const id = String(m.id);
    const held = state.unanswered.get(id);
    if (held === undefined) return;
    state.unanswered.delete(id);
    this.deferred.delete(held);
  }

  /**
   * The client cancelled request `id` on this session (`notifications/cancelled`, sessionful
   * transports only): it no longer waits for the answer, so nothing that happens to the session
   * afterwards can leave it hanging. Still held (cancelled within `requestSpanDelayMs`): dropped,
   * no span, as a request answered in time. Its `request.received` already out: a server-side
   * `forkwatch.request.settled` (outcome `cancelled`, stamped now) tells the detector when the
   * client stopped waiting, so that the session's later end is not read as the request's orphaning.
   */
  cancelled(state: TransportState, id: string): void {
    if (!this.emitters.of(state).enabled) return;
    const held = state.unanswered.get(id);
    if (held !== undefined) {
      state.unanswered.delete(id);
      this.deferred.delete(held);
      return;
    }
    const out = state.awaiting?.get(id);
    // Not awaiting: answered already (the SDK client's cancel on its own timeout can follow the
    // answer), or never seen. Nothing was left waiting, and a span here would lack the method and
    // duration docs/telemetry.md requires (the conformance 409 run's timed-out call found it).
    if (out === undefined) return;
    state.awaiting?.delete(id);
    const now = epochNow();
    this.emitters.of(state).emit(
      SPAN_REQUEST_SETTLED,
      state.sessionId ?? state.transport.sessionId,
      {
        [ATTR_SESSION_INCARNATION]: state.incarnation || undefined,
        [ATTR_SESSION_INCARNATION_SOURCE]: state.incarnation ? (state.link ? 'server' : 'observed') : undefined,
        [ATTR_MCP_METHOD_NAME]: out.method,
        [ATTR_JSONRPC_REQUEST_ID]: id,
        [ATTR_REQUEST_OUTCOME]: 'cancelled',
        [ATTR_REQUEST_DURATION_MS]: now - out.at,
      },
      undefined,
      now,
    );
  }

  /**
   * Emits every held request now, as if its delay had passed: a process that exits must not lose
   * the requests it could not see answered (forceFlush/shutdown).
   */
  flushAll(): void {
    this.deferred.flush();
  }

  /** Requests still unanswered when their session ends are what an orphan is made of: out now. */
  flush(state: TransportState): void {
    if (state.unanswered.size > 0 || (state.awaiting !== undefined && state.awaiting.size > 0)) this.sse.flush(state);
    for (const held of state.unanswered.values()) {
      this.deferred.delete(held);
      this.emit(held);
    }
    state.unanswered.clear();
  }

  private emit(held: HeldRequest): void {
    const { state, info, headers } = held;
    // Its answer must go out too (SseRecorder.onSseEvent); bounded as the held requests are.
    if (info.id !== undefined && info.method !== 'initialize') {
      const awaiting = (state.awaiting ??= new Map());
      if (awaiting.size < this.maxHeld) awaiting.set(info.id, { method: info.method, at: held.at });
    }
    let otelContext: Context | undefined;
    // The context the client put in params._meta (SEP-414) wins over the HTTP header's.
    const carrier = info.traceMeta ?? headers;
    if (carrier !== undefined) {
      try {
        otelContext = propagation.extract(context.active(), carrier);
      } catch {
        // A broken propagator only costs the trace link.
      }
    }
    const pv = headers?.[HEADER_PROTOCOL_VERSION];
    this.emitters.of(state).emit(
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
  }
}
