import type { Context, Span } from '@opentelemetry/api';
import type { EventRing } from '../common/event-ring.js';
import type { IdTable } from '../common/id-table.js';
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
  /** `forkwatch.request.args_digest`: only on a connection without a session id (stateless). */
  digest?: string;
  /** `request.sent` started at send time, its context sent in `params._meta` (stateless only); ended when emitted. */
  span?: Span;
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
  /**
   * Event ids received on this session id (hashed), each with the serial of the stream it came on
   * last (for `forkwatch.client.seen_before` and to name a resumed stream).
   */
  seen: IdTable;
  /** Names of the session's last streams, by serial modulo their bound (a ring). */
  streams: string[];
  /** Streams numbered so far (the next serial). */
  streamCount: number;
  /** Recent SSE events not emitted yet (docs/telemetry.md, "When event history is emitted"). */
  ring: EventRing | undefined;
  /** A moment happened on this session: its events are emitted as they arrive. */
  hot: boolean;
}

/** A response stream as the session state numbers it (see ClientCore.noteEvent). */
export interface StreamTap {
  /** Its name (`get`, `post:<jsonrpc id>`, or the name of the stream it resumes), set before its first event is noted. */
  streamId: string | undefined;
  /** Its serial in {@link serialOwner}'s stream names. */
  serial: number;
  serialOwner: SessionState | undefined;
}
