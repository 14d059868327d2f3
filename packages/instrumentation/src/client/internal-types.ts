import type { Context } from '@opentelemetry/api';
import type { EventRing } from '../common/event-ring.js';
import type { BoundedMap } from './bounded-map.js';
import type { MessageInfo } from './inspect-message.js';
import type { FetchLike } from './types.js';

export type Attrs = Record<string, string | number | boolean | undefined>;
export type Delivery = 'delivered' | 'dropped' | 'no_payload';
export type Outcome = 'answered' | 'error' | 'timeout' | 'cancelled' | 'failed_fork' | 'failed_session_lost' | 'transport_error';

/** A wire event waiting to learn whether it reached the SDK. */
export interface PendingEvent {
  streamId: string;
  sessionId: string | undefined;
  info: MessageInfo;
  attrs: Attrs;
  ctx: Context;
  deadline: number;
  decided: boolean;
}

/** A request made through a hooked `client.request`, from send to settlement. */
export interface TrackedRequest {
  /** Send time, epoch ms. */
  at: number;
  id: string | undefined;
  method: string | undefined;
  tool: string | undefined;
  token: string | undefined;
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  /** Incarnation held when it was sent (a late span must not report a later one). */
  inc: string | undefined;
  ctx: Context;
  progressCount: number;
  /** `request.sent` went out (at once, or when the request outlived the delay). */
  sentEmitted: boolean;
}

/** One wrapped fetch: one client connection. */
export interface Channel {
  fetch: FetchLike;
  attached: boolean;
  /** A hooked client records this connection's requests: the fetch does not. */
  requestsByClient: boolean;
  pending: PendingEvent[];
  timer: NodeJS.Timeout | undefined;
}

export interface SessionState {
  incarnation: string | undefined;
  seen: BoundedMap<string, true>;
  /** Recent SSE events not emitted yet (docs/telemetry.md, "When event history is emitted"). */
  ring: EventRing | undefined;
  /** A moment happened on this session: its events are emitted as they arrive. */
  hot: boolean;
}
