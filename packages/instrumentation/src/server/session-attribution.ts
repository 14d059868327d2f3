import type { IncomingMessage, ServerResponse } from 'node:http';
import { HEADER_LAST_EVENT_ID, HEADER_PROTOCOL_VERSION, HEADER_SESSION_ID } from '../semconv.js';
import type { TransportState } from './internal-types.js';
import { headerValue, nextLogicalTime, requestContexts, rootOf, type RequestContext } from './request-context.js';

/**
 * Who created an incarnation: the request contexts, and the wrapped requests presenting a session
 * id while they are handled. A transport that creates a session under that id was fed by one of
 * them (a handler rehydrating it, perhaps through a synthetic initialize), which is then the
 * request that created it.
 */
export class SessionAttribution {
  /**
   * An entry whose response has closed counts as absent; closed entries are swept when the map
   * has doubled since the last sweep, rather than removed by a 'close' listener on every response
   * (a listener, its closure and its once-wrapper per request were garbage on the host's hot
   * path). So at most 64 or half the map are finished requests waiting for a sweep.
   */
  private readonly presenting = new Map<string, { ctx: RequestContext; res: ServerResponse }>();
  private presentingSweepAt = 64;

  constructor(private readonly maxTrackedSessions: number) {}

  present(sid: string, ctx: RequestContext, res: ServerResponse): void {
    const presenting = this.presenting;
    // Also at the cap before a new id would be refused: the entries holding it may all be finished.
    if (presenting.size >= this.presentingSweepAt || (presenting.size >= this.maxTrackedSessions && !presenting.has(sid))) {
      for (const [k, v] of presenting) if (v.res.closed) presenting.delete(k);
      this.presentingSweepAt = Math.max(64, presenting.size * 2);
    }
    if (presenting.size < this.maxTrackedSessions || presenting.has(sid)) presenting.set(sid, { ctx, res });
  }

  newContext(req: IncomingMessage, wrapped: boolean): RequestContext {
    // Every field present from the start: one object shape for every request.
    const ctx: RequestContext = {
      headers: req.headers,
      parent: undefined,
      wrapped,
      method: (req.method ?? 'unknown').toUpperCase(),
      arrival: nextLogicalTime(),
      sessionIdHeader: headerValue(req, HEADER_SESSION_ID),
      lastEventId: headerValue(req, HEADER_LAST_EVENT_ID),
      protocolVersion: headerValue(req, HEADER_PROTOCOL_VERSION),
      otelContext: undefined,
      rpcMethod: undefined,
      claimed: false,
      resumeEmitted: false,
      guard: undefined,
    };
    requestContexts.set(req, ctx);
    return ctx;
  }

  /** The request a session created now is credited to: the real one a synthetic request was fed by. */
  creatorOf(ctx: RequestContext, sessionId: string): RequestContext {
    const root = rootOf(ctx);
    if (root.wrapped) return root;
    const entry = this.presenting.get(sessionId);
    const outer = entry === undefined || entry.res.closed ? undefined : entry.ctx;
    if (outer === undefined || outer === root) return root;
    root.parent = outer;
    return outer;
  }
}

/**
 * The serving incarnation did not exist when the request arrived: created by this very request,
 * or by a concurrent one (apps share one rehydration between the GET and POST streams the SDK
 * reconnects together, so the request that mints it is often not the resume itself).
 */
export function bornDuring(state: TransportState, ctx: RequestContext): boolean {
  const root = rootOf(ctx);
  if (state.createdBy !== undefined && state.createdBy === root) return true;
  return state.createdAt !== undefined && state.createdAt > root.arrival;
}
