import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_RESUME_LAST_EVENT_ID,
  ATTR_SESSION_CLIENT_SUPPLIED_ID,
  ATTR_SESSION_CREATED_BY,
  ATTR_SESSION_END_REASON,
  ATTR_SESSION_EVENTS_EVICTED,
  SPAN_SESSION_CREATED,
  SPAN_SESSION_ENDED,
} from '../semconv.js';
import { newIncarnation } from '../common/incarnation.js';
import { guardLinks } from './guard-link.js';
import type { HeldRequests } from './held-requests.js';
import type { TransportState } from './internal-types.js';
import { nextLogicalTime, otelContextOf, type RequestContext } from './request-context.js';
import type { SessionAttribution } from './session-attribution.js';
import type { SseRecorder } from './sse-recorder.js';
import type { ServerEmitters } from './server-emitters.js';
import type { TransportRegistry } from './transport-registry.js';
import type { SessionEndReason } from './types.js';

/** An incarnation's birth (`forkwatch.session.created`, with its cause) and end (`forkwatch.session.ended`). */
export class SessionLifecycle {
  constructor(
    private readonly emitters: ServerEmitters,
    private readonly registry: TransportRegistry,
    private readonly attribution: SessionAttribution,
    private readonly held: HeldRequests,
    private readonly sse: SseRecorder,
  ) {}

  /** The request a message arrived on, while it matters (the incarnation is still unknown). */
  inflightFor(state: TransportState): RequestContext | undefined {
    const list = state.inflight;
    if (list.length <= 1) return list[0];
    // The SDK hands onmessage no request object: the oldest POST still without a method is the best guess.
    for (const c of list) if (c.method === 'POST' && c.rpcMethod === undefined) return c;
    return list[list.length - 1];
  }

  /** Creates the incarnation once the transport's session id is known and the cause is. */
  maybeCreate(state: TransportState, ctx: RequestContext | undefined, final: boolean): void {
    if (state.incarnation !== undefined) return;
    const sessionId = state.transport.sessionId;
    if (sessionId === undefined) return;
    const root = ctx ? this.attribution.creatorOf(ctx, sessionId) : undefined;
    let createdBy = 'unknown';
    if (root) {
      if (root.method === 'POST') {
        // The POST body's method is learnt from onmessage; wait for it unless this is the last chance.
        const m = root.rpcMethod ?? ctx?.rpcMethod;
        if (m === undefined && !final) return;
        createdBy = m ?? 'unknown';
      } else {
        createdBy = root.method;
      }
    }
    const link = state.link ?? guardLinks.get(state.transport);
    if (link) state.link = link;
    state.incarnation = link?.incarnation ?? newIncarnation();
    state.sessionId = sessionId;
    state.createdAt = nextLogicalTime();
    if (root) state.createdBy = root;
    const previous = this.registry.find(sessionId);
    this.registry.track(state, sessionId);
    const supplied =
      root !== undefined && (root.sessionIdHeader === sessionId || (ctx !== undefined && ctx.sessionIdHeader === sessionId));
    state.rehydrated = supplied && createdBy !== 'initialize';
    // A session born of anything but initialize is a moment: earlier lives of the id are emitted.
    if (createdBy !== 'initialize') {
      if (previous !== undefined && previous !== state) this.sse.moment(previous, undefined);
      this.sse.moment(state, sessionId);
    }
    this.emitters.of(state).emit(
      SPAN_SESSION_CREATED,
      sessionId,
      {
        ...this.emitters.incarnationAttrs(state),
        [ATTR_SESSION_CREATED_BY]: createdBy,
        [ATTR_SESSION_CLIENT_SUPPLIED_ID]: supplied,
        [ATTR_RESUME_LAST_EVENT_ID]: root?.lastEventId ?? ctx?.lastEventId,
        [ATTR_HTTP_REQUEST_METHOD]: root?.method,
        [ATTR_MCP_PROTOCOL_VERSION]: root?.protocolVersion,
      },
      root ? otelContextOf(root) : undefined,
    );
  }

  end(state: TransportState, fallback: SessionEndReason): void {
    if (state.ended) return;
    state.ended = true;
    this.held.flush(state);
    const sessionId = state.sessionId ?? state.transport.sessionId;
    this.registry.untrack(state, sessionId);
    // A transport that never got a session id never had an incarnation: nothing ended.
    if (state.incarnation === undefined) {
      if (state.ring) this.sse.retire(state, 'closed_by_client');
      return;
    }
    const reason = state.pendingEnd?.reason ?? (state.deleting ? 'closed_by_client' : fallback);
    this.sse.retire(state, reason);
    this.emitters.of(state).emit(SPAN_SESSION_ENDED, sessionId, {
      ...this.emitters.incarnationAttrs(state),
      [ATTR_SESSION_END_REASON]: reason,
      [ATTR_SESSION_EVENTS_EVICTED]: state.pendingEnd?.eventsEvicted,
    });
  }
}
