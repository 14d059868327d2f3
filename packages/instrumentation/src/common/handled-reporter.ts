import { SpanKind, type Context, type DiagLogger, type Tracer } from '@opentelemetry/api';
import {
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GUARDED,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_REQUEST_ARGS_DIGEST,
  ATTR_REQUEST_HANDLER_OUTCOME,
  ATTR_REQUEST_MESSAGES_AFTER_CLOSE,
  ATTR_REQUEST_STREAM_CLOSED,
  ATTR_SCHEMA_VERSION,
  ATTR_SIDE,
  SCHEMA_VERSION,
  SPAN_REQUEST_HANDLED,
} from '../semconv.js';
import { DEFAULT_REISSUE_WINDOW_MS, RecentShapes } from './recent-shapes.js';

/** One request a stateless server handled, as `forkwatch.request.handled` reports it. */
export interface HandledCall {
  method: string;
  id: string;
  tool?: string;
  /** `forkwatch.request.args_digest`. */
  digest: string;
  /** When the request was read, epoch ms. */
  startMs: number;
  /** When its response stream closed before its answer was written, epoch ms. */
  closedAtMs?: number;
  /** Messages produced for it after that close. */
  afterClose: number;
  /** The trace context the client wrote into `params._meta` (or the HTTP header's). */
  parent: Context;
  /**
   * The request's protocol revision, when it names one (2026-07-28 requests carry it in
   * `params._meta`): on that revision closing the stream *is* the client's cancel.
   */
  protocolVersion?: string;
}

/**
 * Emits `forkwatch.request.handled` for the stateless transport (docs/telemetry.md) when it can
 * matter: the request's stream closed before its answer, messages were produced after that, or
 * it repeats (method, tool, argument digest) such a call within the re-issue window; every
 * request with `everyRequest`. Shared by the SDK 2.x `createMcpHandler` path and the SDK 1.x
 * transports run with `sessionIdGenerator: undefined`. Never throws.
 */
export class HandledReporter {
  private readonly recent: RecentShapes;

  constructor(
    private readonly tracer: Tracer,
    private readonly log: DiagLogger,
    reissueWindowMs = DEFAULT_REISSUE_WINDOW_MS,
    private readonly everyRequest = false,
  ) {
    this.recent = new RecentShapes(reissueWindowMs);
  }

  /** The handler of `c` finished (`outcome`: `completed`, `error`, `cancelled`; undefined when not seen). */
  report(c: HandledCall, outcome: string | undefined, nowMs = Date.now()): void {
    try {
      const shape = RecentShapes.shape(c.method, c.tool, c.digest);
      const matters = this.everyRequest || c.closedAtMs !== undefined || c.afterClose > 0 || this.recent.has(shape, c.startMs);
      if (c.closedAtMs !== undefined) this.recent.note(shape, c.closedAtMs);
      if (!matters) return;
      const span = this.tracer.startSpan(
        SPAN_REQUEST_HANDLED,
        {
          kind: SpanKind.INTERNAL,
          startTime: c.startMs,
          attributes: {
            [ATTR_SCHEMA_VERSION]: SCHEMA_VERSION,
            [ATTR_SIDE]: 'server',
            [ATTR_GUARDED]: false,
            [ATTR_MCP_METHOD_NAME]: c.method,
            [ATTR_JSONRPC_REQUEST_ID]: c.id,
            [ATTR_REQUEST_ARGS_DIGEST]: c.digest,
            ...(outcome !== undefined ? { [ATTR_REQUEST_HANDLER_OUTCOME]: outcome } : {}),
            [ATTR_REQUEST_STREAM_CLOSED]: c.closedAtMs !== undefined,
            [ATTR_REQUEST_MESSAGES_AFTER_CLOSE]: c.afterClose,
            ...(c.tool !== undefined ? { [ATTR_GEN_AI_TOOL_NAME]: c.tool.slice(0, 256) } : {}),
            ...(c.protocolVersion !== undefined ? { [ATTR_MCP_PROTOCOL_VERSION]: c.protocolVersion } : {}),
          },
        },
        c.parent,
      );
      span.end(nowMs);
    } catch (err) {
      this.log.debug('request.handled emit failed', err);
    }
  }
}
