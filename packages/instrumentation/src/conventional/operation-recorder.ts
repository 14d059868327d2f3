import {
  context,
  metrics,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Histogram,
  type Link,
  type Meter,
  type MeterProvider,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { DiagLogger } from '@opentelemetry/api';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_CLIENT_PORT,
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROMPT_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_MCP_RESOURCE_URI,
  ATTR_MCP_SESSION_ID,
  ATTR_NETWORK_PROTOCOL_NAME,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_NETWORK_TRANSPORT,
  ATTR_RPC_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SESSION_KEY,
  MCP_OPERATION_DURATION_BUCKETS,
  METRIC_MCP_CLIENT_OPERATION_DURATION,
  METRIC_MCP_SERVER_OPERATION_DURATION,
} from '../semconv.js';
import { MAX_ATTRIBUTE_CHARS } from '../common/span-emitter.js';
import { sessionKey } from '../common/session-key.js';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../version.js';

/** What both sides' conventional recorders take from the instrumentation's options. */
export interface ConventionalOptions {
  tracerProvider?: TracerProvider;
  /** Default: the global `metrics.getMeterProvider()` of `@opentelemetry/api`, looked up per record. */
  meterProvider?: MeterProvider;
  salt: string;
  recordRawSessionId: boolean;
  logger: DiagLogger;
}

/** One MCP request being timed: its span, the attributes its histogram point will carry, its start. */
export interface Operation {
  readonly span: Span;
  /** The context with {@link span} active: what the request's own work runs in. */
  readonly ctx: Context;
  readonly metricAttrs: Attributes;
  readonly startedAt: number;
  ended: boolean;
}

/** What a request is, read from its JSON-RPC message. */
export interface RequestShape {
  method: string;
  id?: string | number | null | undefined;
  params?: unknown;
}

/** Where the request went or came from, and in which session. */
export interface OperationPeer {
  sessionId?: string | undefined;
  protocolVersion?: string | undefined;
  serverAddress?: string | undefined;
  serverPort?: number | undefined;
  /** Server: the HTTP peer (span only: the conventions leave it off the metric). */
  clientAddress?: string | undefined;
  clientPort?: number | undefined;
  /** `1.1` or `2`: the HTTP version, when known (span and metric). */
  networkProtocolVersion?: string | undefined;
  parent: Context;
  links?: Link[];
}

/** How an operation ended; all absent for a success. */
export interface OperationOutcome {
  errorType?: string;
  statusCode?: string;
  message?: string;
}

const cut = (v: string): string => (v.length > MAX_ATTRIBUTE_CHARS ? v.slice(0, MAX_ATTRIBUTE_CHARS) : v);

/**
 * Starts and ends the MCP conventions' operation spans (`{mcp.method.name} {target}`, CLIENT or
 * SERVER) and records `mcp.{client,server}.operation.duration` for one side. Built only when the
 * `mcpSemconv` option is on. Never throws: a failing tracer or meter costs the span or the point.
 *
 * The raw session id is a bearer credential: it becomes `mcp.session.id` only with
 * `recordRawSessionId`; otherwise the span carries `forkwatch.session.key` (the salted digest
 * every forkwatch span carries) and no session attribute reaches the metrics at all.
 */
export class OperationRecorder {
  private readonly tracer: Tracer;
  private readonly kind: SpanKind;
  private readonly metricName: string;
  private readonly histograms = new WeakMap<Meter, Histogram>();
  failures = 0;

  constructor(
    side: 'client' | 'server',
    private readonly opts: ConventionalOptions,
  ) {
    this.tracer = (opts.tracerProvider ?? trace.getTracerProvider()).getTracer(PACKAGE_NAME, PACKAGE_VERSION);
    this.kind = side === 'client' ? SpanKind.CLIENT : SpanKind.SERVER;
    this.metricName = side === 'client' ? METRIC_MCP_CLIENT_OPERATION_DURATION : METRIC_MCP_SERVER_OPERATION_DURATION;
  }

  /** Starts the span of request `req`; undefined if the tracer failed. */
  start(req: RequestShape, peer: OperationPeer): Operation | undefined {
    try {
      const p = req.params !== null && typeof req.params === 'object' ? (req.params as Record<string, unknown>) : undefined;
      const metricAttrs: Attributes = { [ATTR_MCP_METHOD_NAME]: req.method, [ATTR_NETWORK_TRANSPORT]: 'tcp', [ATTR_NETWORK_PROTOCOL_NAME]: 'http' };
      let target: string | undefined;
      if (req.method === 'tools/call' && typeof p?.name === 'string') {
        target = cut(p.name);
        metricAttrs[ATTR_GEN_AI_TOOL_NAME] = target;
        metricAttrs[ATTR_GEN_AI_OPERATION_NAME] = 'execute_tool';
      } else if (req.method === 'prompts/get' && typeof p?.name === 'string') {
        target = cut(p.name);
        metricAttrs[ATTR_GEN_AI_PROMPT_NAME] = target;
      }
      if (peer.protocolVersion !== undefined) metricAttrs[ATTR_MCP_PROTOCOL_VERSION] = cut(peer.protocolVersion);
      if (peer.serverAddress !== undefined) metricAttrs[ATTR_SERVER_ADDRESS] = peer.serverAddress;
      if (peer.serverPort !== undefined) metricAttrs[ATTR_SERVER_PORT] = peer.serverPort;
      if (peer.networkProtocolVersion !== undefined) metricAttrs[ATTR_NETWORK_PROTOCOL_VERSION] = peer.networkProtocolVersion;
      const attributes: Attributes = { ...metricAttrs };
      if (peer.clientAddress !== undefined) attributes[ATTR_CLIENT_ADDRESS] = peer.clientAddress;
      if (peer.clientPort !== undefined) attributes[ATTR_CLIENT_PORT] = peer.clientPort;
      // null or omitted ids are not recorded (the conventions' rule).
      if (req.id !== undefined && req.id !== null) attributes[ATTR_JSONRPC_REQUEST_ID] = cut(String(req.id));
      // Resource URIs are per request: on the span (conditionally required), never on the metric.
      if (typeof p?.uri === 'string' && req.method.startsWith('resources/')) attributes[ATTR_MCP_RESOURCE_URI] = cut(p.uri);
      if (peer.sessionId) {
        attributes[ATTR_SESSION_KEY] = sessionKey(peer.sessionId, this.opts.salt);
        if (this.opts.recordRawSessionId) attributes[ATTR_MCP_SESSION_ID] = cut(peer.sessionId);
      }
      const name = target === undefined ? req.method : `${req.method} ${target}`;
      const span = this.tracer.startSpan(cut(name), { kind: this.kind, attributes, ...(peer.links?.length ? { links: peer.links } : {}) }, peer.parent);
      return { span, ctx: trace.setSpan(peer.parent, span), metricAttrs, startedAt: performance.now(), ended: false };
    } catch (err) {
      this.failures++;
      this.opts.logger.debug('conventional span start failed', err);
      return undefined;
    }
  }

  /**
   * `mcp.protocol.version` learnt after the start (the version an `initialize` result
   * negotiated), on the span and the histogram point; nothing once `op` ended.
   */
  setProtocolVersion(op: Operation, version: string): void {
    if (op.ended) return;
    try {
      const v = cut(version);
      op.metricAttrs[ATTR_MCP_PROTOCOL_VERSION] = v;
      op.span.setAttribute(ATTR_MCP_PROTOCOL_VERSION, v);
    } catch (err) {
      this.failures++;
      this.opts.logger.debug('conventional attribute failed', err);
    }
  }

  /** Ends `op` (once) with its outcome, and records its duration. */
  end(op: Operation, outcome: OperationOutcome): void {
    if (op.ended) return;
    op.ended = true;
    try {
      const seconds = (performance.now() - op.startedAt) / 1000;
      const attrs = outcome.errorType === undefined && outcome.statusCode === undefined ? op.metricAttrs : { ...op.metricAttrs };
      if (outcome.errorType !== undefined) attrs[ATTR_ERROR_TYPE] = outcome.errorType;
      if (outcome.statusCode !== undefined) attrs[ATTR_RPC_RESPONSE_STATUS_CODE] = outcome.statusCode;
      if (attrs !== op.metricAttrs) {
        if (outcome.errorType !== undefined) op.span.setAttribute(ATTR_ERROR_TYPE, outcome.errorType);
        if (outcome.statusCode !== undefined) op.span.setAttribute(ATTR_RPC_RESPONSE_STATUS_CODE, outcome.statusCode);
      }
      if (outcome.errorType !== undefined) op.span.setStatus({ code: SpanStatusCode.ERROR, ...(outcome.message ? { message: cut(outcome.message) } : {}) });
      op.span.end();
      this.histogram()?.record(seconds, attrs);
    } catch (err) {
      this.failures++;
      this.opts.logger.debug('conventional span end failed', err);
    }
  }

  /**
   * The histogram of the meter provider current now: the global one may be set after we start,
   * and an SDK's MeterProvider makes one meter per name, so this is one lookup per point.
   */
  private histogram(): Histogram | undefined {
    const provider = this.opts.meterProvider ?? metrics.getMeterProvider();
    const meter = provider.getMeter(PACKAGE_NAME, PACKAGE_VERSION);
    let h = this.histograms.get(meter);
    if (h === undefined) {
      h = meter.createHistogram(this.metricName, {
        unit: 's',
        description:
          this.kind === SpanKind.CLIENT
            ? 'Duration of an MCP request as observed by the sender, from sent until its response was received.'
            : 'Duration of an MCP request as observed by the receiver, from received until its response was sent.',
        // `advice` reaches SDKs from api 1.7; older ones ignore it (then configure a View).
        advice: { explicitBucketBoundaries: [...MCP_OPERATION_DURATION_BUCKETS] },
      } as Parameters<Meter['createHistogram']>[1]);
      this.histograms.set(meter, h);
    }
    return h;
  }
}

/** The outcome of a JSON-RPC error object `{ code, message }` (the conventions: code as a string, both attributes). */
export function jsonRpcErrorOutcome(error: unknown): OperationOutcome {
  const e = error !== null && typeof error === 'object' ? (error as { code?: unknown; message?: unknown }) : {};
  const code = typeof e.code === 'number' || typeof e.code === 'string' ? String(e.code) : undefined;
  const message = typeof e.message === 'string' ? e.message : undefined;
  return code === undefined ? { errorType: '_OTHER', ...(message ? { message } : {}) } : { errorType: code, statusCode: code, ...(message ? { message } : {}) };
}

/**
 * JSON-RPC error codes that are the client's fault: `-32601` (method not found) and `-32602`
 * (invalid params). On the server they are not a failure of the operation (as HTTP 4xx and
 * gRPC INVALID_ARGUMENT on a server span): status unset, no `error.type`, the code still in
 * `rpc.response.status_code` on span and metric. The client's span records them as errors.
 */
export const CLIENT_FAULT_CODES: ReadonlySet<string> = new Set(['-32601', '-32602']);

/** {@link jsonRpcErrorOutcome} as the server records it: {@link CLIENT_FAULT_CODES} are no error there. */
export function serverJsonRpcErrorOutcome(error: unknown): OperationOutcome {
  const o = jsonRpcErrorOutcome(error);
  return o.statusCode !== undefined && CLIENT_FAULT_CODES.has(o.statusCode) ? { statusCode: o.statusCode } : o;
}

/** The outcome of a successful JSON-RPC result: `tool_error` for a CallToolResult with isError. */
export function resultOutcome(result: unknown): OperationOutcome {
  if (result !== null && typeof result === 'object' && (result as { isError?: unknown }).isError === true) return { errorType: 'tool_error' };
  return {};
}

/** The active context, for callers that have none of their own. */
export const activeContext = (): Context => context.active();
