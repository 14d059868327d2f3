import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { TransportState } from './internal-types.js';

/** Default of `maxTrackedSessions`. */
export const DEFAULT_MAX_TRACKED_SESSIONS = 10_000;

/**
 * The observed transports' states: by transport (weakly) and, for `markEnded(id)`, by raw session
 * id, bounded at `maxTrackedSessions` with the oldest forgotten first (insertion order).
 */
export class TransportRegistry {
  private readonly bySessionId = new Map<string, TransportState>();
  private readonly states = new WeakMap<object, TransportState>();

  constructor(private readonly maxTrackedSessions: number) {}

  add(transport: StreamableHTTPServerTransport, state: TransportState): void {
    this.states.set(transport, state);
  }

  track(state: TransportState, sessionId: string): void {
    if (this.bySessionId.size >= this.maxTrackedSessions && !this.bySessionId.has(sessionId)) {
      const oldest = this.bySessionId.keys().next();
      if (!oldest.done) this.bySessionId.delete(oldest.value);
    }
    this.bySessionId.set(sessionId, state);
  }

  untrack(state: TransportState, sessionId: string | undefined): void {
    if (sessionId !== undefined && this.bySessionId.get(sessionId) === state) this.bySessionId.delete(sessionId);
  }

  find(sessionIdOrTransport: string | StreamableHTTPServerTransport): TransportState | undefined {
    return typeof sessionIdOrTransport === 'string' ? this.bySessionId.get(sessionIdOrTransport) : this.states.get(sessionIdOrTransport);
  }
}
