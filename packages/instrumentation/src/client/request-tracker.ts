import { context, propagation, trace, type Context } from '@opentelemetry/api';
import { withTraceMeta } from '../conventional/meta-context.js';
import { argsDigest } from '../common/args-digest.js';
import { sdkErrorOutcome } from '../common/error-outcome.js';
import {
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_PROGRESS_TOKEN,
  ATTR_REQUEST_ARGS_DIGEST,
  ATTR_REQUEST_DURATION_MS,
  ATTR_REQUEST_OUTCOME,
  ATTR_REQUEST_PROGRESS_COUNT,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  SPAN_REQUEST_SENT,
  SPAN_REQUEST_SETTLED,
} from '../semconv.js';
import { DeferredRequests, epochNow } from '../common/deferred-requests.js';
import type { ClientCore } from './client-core.js';
import type { DeliveryTracker } from './delivery-tracker.js';
import { forkOf } from './fork-registry.js';
import { boundedSessionId } from './http-message.js';
import type { Outcome, TrackedRequest } from './internal-types.js';
import { requestOptionsIndex } from './request-options.js';
import { isSessionForkError } from './session-fork-error.js';
import type { AttachableClient, AttachableTransport } from './types.js';

/**
 * A hooked client's requests from send to settlement: `forkwatch.request.sent` and
 * `forkwatch.request.settled`, held back while the request may still be answered in time.
 */
export class RequestTracker {
  private readonly held: DeferredRequests<TrackedRequest>;

  constructor(
    private readonly core: ClientCore,
    private readonly delivery: DeliveryTracker,
  ) {
    this.held = new DeferredRequests(core.requestSpanDelayMs, (r) => this.emitSent(r));
  }

  /** Emits every held-back request now, as still unanswered (forceFlush/shutdown). */
  flush(): void {
    this.held.flush();
  }

  hookRequest(client: AttachableClient, transport: AttachableTransport): void {
    const original = client.request;
    const self = this;
    const core = this.core;
    /** Requests of this client being tracked (bounded by maxPendingRequests). */
    const counter = { pending: 0 };
    client.request = function (this: unknown, request: any) {
      // eslint-disable-next-line prefer-rest-params
      const args = Array.prototype.slice.call(arguments) as unknown[];
      // 1.x: (request, schema, options); 2.x: (request, options) or (request, schema, options).
      const at = requestOptionsIndex(args);
      const options = args[at] as { onprogress?: unknown; signal?: AbortSignal } | undefined;
      let r: TrackedRequest | undefined;
      let callCtx: Context | undefined;
      try {
        // Nothing to track for a tracer that records nothing (no SDK registered).
        if (counter.pending < core.maxPendingRequests && core.emitter.enabled) {
          const next = (client as { _requestMessageId?: unknown })._requestMessageId;
          const id = typeof next === 'number' ? String(next) : undefined;
          const appToken = request?.params?._meta?.progressToken;
          const method = typeof request?.method === 'string' ? request.method : undefined;
          const tool = request?.params?.name;
          const pv = (transport as { protocolVersion?: unknown }).protocolVersion;
          const sessionId = boundedSessionId(transport.sessionId, core.maxSessionIdChars);
          const tracked: TrackedRequest = {
            at: epochNow(),
            id,
            method,
            tool: method === 'tools/call' && typeof tool === 'string' ? tool : undefined,
            token: typeof appToken === 'string' || typeof appToken === 'number' ? String(appToken) : typeof options?.onprogress === 'function' ? id : undefined,
            sessionId,
            protocolVersion: typeof pv === 'string' ? pv : undefined,
            inc: core.incarnationOf(sessionId),
            ctx: context.active(),
            progressCount: 0,
            sentEmitted: false,
          };
          // No session id (a stateless server, SDK 1.x `sessionIdGenerator: undefined`): the detector
          // correlates the call by (trace id, request id) and a re-issue by its argument digest, so
          // the call gets both, and request.sent is started now: its context is what goes into
          // params._meta (hookTraceMeta, inside this hook), even with no span of the app's active.
          if (sessionId === undefined && method !== undefined && method !== 'initialize') {
            tracked.digest = argsDigest(request?.params);
            // A traceparent already in params._meta (the app's, or the mcpSemconv operation span's)
            // names the call's trace: request.sent joins it.
            const meta = request?.params?._meta;
            if (meta !== null && typeof meta === 'object' && typeof meta.traceparent === 'string') tracked.ctx = propagation.extract(tracked.ctx, meta);
            tracked.span = core.emitter.start(SPAN_REQUEST_SENT, undefined, sentAttrs(tracked), tracked.ctx, tracked.at);
            if (tracked.span !== undefined) {
              callCtx = trace.setSpan(tracked.ctx, tracked.span);
              // Written here, not left to the active context: an app without a context manager has none.
              if (core.injectTraceContext) args[0] = withTraceMeta(request, callCtx);
            }
          }
          if (typeof options?.onprogress === 'function') {
            const onprogress = options.onprogress as (p: unknown) => unknown;
            args[at] = { ...options, onprogress: (p: unknown) => { tracked.progressCount++; return onprogress(p); } };
          }
          r = tracked;
          counter.pending++;
          // initialize marks a new life for the correlator: never held back.
          if (core.requestSpanDelayMs <= 0 || method === 'initialize') self.emitSent(tracked);
          else self.held.add(tracked);
        }
      } catch (err) {
        core.fail('request hook', err);
      }
      let result: Promise<unknown>;
      try {
        result = (callCtx !== undefined ? context.with(callCtx, () => original.apply(this, args)) : original.apply(this, args)) as Promise<unknown>;
      } catch (err) {
        if (r) {
          counter.pending--;
          self.held.delete(r);
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
      const held = this.held.delete(s);
      // Answered in time: it could not have been orphaned, so it costs no span.
      if (held && (outcome === 'answered' || outcome === 'error')) return;
      if (!s.sentEmitted) this.emitSent(s);
      const inc = this.core.incarnationOf(s.sessionId);
      this.core.emitter.emit(SPAN_REQUEST_SETTLED, s.sessionId ?? boundedSessionId(transport.sessionId, this.core.maxSessionIdChars), {
        [ATTR_MCP_METHOD_NAME]: s.method,
        [ATTR_JSONRPC_REQUEST_ID]: s.id,
        [ATTR_PROGRESS_TOKEN]: s.token,
        [ATTR_REQUEST_OUTCOME]: outcome,
        [ATTR_REQUEST_DURATION_MS]: epochNow() - s.at,
        [ATTR_REQUEST_PROGRESS_COUNT]: s.progressCount,
        [ATTR_SESSION_INCARNATION]: inc,
        [ATTR_SESSION_INCARNATION_SOURCE]: inc ? 'server' : undefined,
        [ATTR_REQUEST_ARGS_DIGEST]: s.digest,
      }, s.span !== undefined ? trace.setSpan(s.ctx, s.span) : undefined);
    } catch (err) {
      this.core.fail('settle hook', err);
    }
  }

  /** `forkwatch.request.sent` of a hooked request, stamped with its send time. Never throws. */
  private emitSent(r: TrackedRequest): void {
    if (r.sentEmitted) return;
    r.sentEmitted = true;
    try {
      // A request outliving the delay (or settling without an answer) is a moment: the session's
      // recent events go out with it. initialize is emitted at once and is no moment.
      if (r.method !== 'initialize') this.delivery.moment(r.sessionId, false);
      if (r.span !== undefined) r.span.end(r.at);
      else this.core.emitter.emit(SPAN_REQUEST_SENT, r.sessionId, sentAttrs(r), r.ctx, r.at);
    } catch (err) {
      this.core.fail('request.sent', err);
    }
  }
}

/** The attributes of a request's `forkwatch.request.sent`, all known when it was sent. */
function sentAttrs(r: TrackedRequest): Record<string, string | undefined> {
  const inc = r.inc;
  return {
    [ATTR_MCP_METHOD_NAME]: r.method,
    [ATTR_JSONRPC_REQUEST_ID]: r.id,
    [ATTR_PROGRESS_TOKEN]: r.token,
    [ATTR_GEN_AI_TOOL_NAME]: r.tool,
    [ATTR_MCP_PROTOCOL_VERSION]: r.protocolVersion,
    [ATTR_SESSION_INCARNATION]: inc,
    [ATTR_SESSION_INCARNATION_SOURCE]: inc ? 'server' : undefined,
    [ATTR_REQUEST_ARGS_DIGEST]: r.digest,
  };
}

/** Why a request stopped waiting, from what it was rejected with. */
function classify(err: unknown, signal: AbortSignal | undefined, fork: { kind: string } | undefined): Outcome {
  if (isSessionForkError(err)) return err.kind === 'session_not_found' ? 'failed_session_lost' : 'failed_fork';
  if (signal?.aborted) return 'cancelled';
  if (fork) return fork.kind === 'session_not_found' ? 'failed_session_lost' : 'failed_fork';
  const sdk = sdkErrorOutcome(err);
  if (sdk !== undefined) return sdk;
  if (err instanceof Error && err.name === 'ZodError') return 'error';
  return 'transport_error';
}
