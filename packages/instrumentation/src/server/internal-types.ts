import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { EventRing } from '../common/event-ring.js';
import type { JsonRpcInfo } from '../common/jsonrpc-info.js';
import type { EventIdTracker } from './event-id-tracker.js';
import type { GuardLink } from './guard-link.js';
import type { RequestContext } from './request-context.js';
import type { StatelessTransportCalls } from './stateless-calls.js';
import type { SessionEndReason } from './types.js';

export type Attrs = Record<string, string | number | boolean | undefined | null>;

/** Per transport instance: its one incarnation and what it sent. */
export interface TransportState {
  transport: StreamableHTTPServerTransport;
  link?: GuardLink;
  incarnation?: string;
  sessionId?: string;
  /** Root request during which the incarnation was created. */
  createdBy?: RequestContext;
  /** Logical time ({@link nextLogicalTime}) the incarnation was created; undefined when adopted late. */
  createdAt?: number;
  /** Created by a request other than initialize under the id the client presented (rehydration). */
  rehydrated?: boolean;
  tracker: EventIdTracker;
  ended: boolean;
  pendingEnd?: { reason: SessionEndReason; eventsEvicted?: number };
  /** A DELETE is being handled: a close now is the client's. */
  deleting: boolean;
  /** Requests being handled while the incarnation is still unknown: one of them creates it. */
  inflight: RequestContext[];
  /** Requests received and not yet answered, whose span is held back, by JSON-RPC id. */
  unanswered: Map<string, HeldRequest>;
  /** Recent SSE events not emitted yet (docs/telemetry.md, "When event history is emitted"). */
  ring: EventRing | undefined;
  /** A moment happened on this incarnation: its events are emitted as they are sent. */
  hot: boolean;
  /**
   * Requests whose `forkwatch.request.received` went out unanswered, by JSON-RPC id (method, arrival
   * in epoch ms): their answer's event is emitted (with the ring before it) the moment it is sent, or
   * the detector would see a received request, a later session end and no answer (a false orphan);
   * a client's cancel of one is settled with its method and duration.
   */
  awaiting?: Map<string, { method: string | undefined; at: number }>;
  /** SDK 1.x run stateless (`sessionIdGenerator: undefined`): its requests, for `request.handled`. */
  stateless?: StatelessTransportCalls;
}

/** A received request whose `forkwatch.request.received` waits (see DeferredRequests). */
export interface HeldRequest {
  at: number;
  state: TransportState;
  info: JsonRpcInfo;
  /** The request headers the SDK handed onmessage: trace context and protocol version. */
  headers: Record<string, string> | undefined;
}
