import { parseEventId, type ParsedEventId } from '../common/incarnation.js';
import { BoundedMap } from './bounded-map.js';
import { SessionForkError } from './session-fork-error.js';

/** What the server answered to a `Last-Event-ID` resume, as {@link ForkGuard.resume} checks it. */
export interface ResumeAnswer {
  /** `Mcp-Session-Id` the answer carried (undefined: none, taken as the same session). */
  serverSessionId: string | undefined;
  /** Incarnation the answer carried (undefined: none sent). */
  serverIncarnation: string | undefined;
  /** The cursor presented. */
  lastEventId: string;
  /** Whether the server's log holds the cursor (false for a 409 answer). Default true. */
  serverLogHas?: boolean;
  /** Stream the cursor belongs to. Default '' (one stream per session, as in the seed). */
  streamId?: string;
}

/** Bounds of a {@link ForkGuard}. */
export interface ForkGuardOptions {
  /** Dedup keys remembered. Default 4096. */
  maxSeenEvents?: number;
  /** Streams whose last sequence is remembered. Default 256. */
  maxStreams?: number;
  /** `forkwatch.session.key` put on raised errors (never the raw id). */
  sessionKey?: string;
}

type SeqSource = NonNullable<ParsedEventId['source']>;

/**
 * Highest sequence seen on the session, per id shape (`counter`: `e7`; `server`: `<inc>-7`).
 * A snapshot of it taken when a request is sent is the floor of the stream that request opens.
 */
export type HighWaterMark = Partial<Record<SeqSource, number>>;

/** The check armed on a stream until its first event above the floor. */
interface Floor {
  seqs: HighWaterMark;
  /**
   * true: a resumed stream, which may legitimately re-send events the client already holds; at
   * or below the floor only an exact duplicate (same id, same payload digest) is let through
   * (dropped). false: a stream that starts now, which carries only events stored after its
   * request, so anything at or below the floor is a regression.
   */
  replay: boolean;
}

interface StreamState {
  lastSeq: number;
  lastSource: ParsedEventId['source'];
  floor?: Floor;
}

/** Stored per dedup key: the payload digest of the event accepted under it ('' when unknown). */
type SeenDigest = string;

/**
 * The seed's `ResumableStream` (MISSION.md) for one session, with mitigation (c) made to hold
 * against servers that send no incarnation:
 * - `resume()` refuses a resume that would fork and arms the resumed stream: its events at or
 *   below the cursor must be exact duplicates (same id and payload digest), else
 *   `sequence_regression`.
 * - `openStream()` arms a new stream (a POST's, or a GET without cursor) with the session's
 *   high-water mark taken when its request was sent: event ids with a sequence (counter or
 *   guarded) are numbered per session, so a new stream's first event must be above it. This
 *   catches a rehydrated session whose fresh log restarts at `e1` on the next call's stream.
 * - `acceptEvent()` runs these checks BEFORE dedup; dedup is keyed `(session, incarnation, event
 *   id)` and only drops an event whose payload digest matches the one accepted under that key: an
 *   id seen before with another payload is a fork, never a silent drop.
 * Ids without a sequence (the SDK example store's `<stream>_<ms>_<rand>`) are never compared.
 */
export class ForkGuard {
  private readonly seen: BoundedMap<string, SeenDigest>;
  private readonly streams: BoundedMap<string, StreamState>;
  private readonly key: string | undefined;
  private readonly high: HighWaterMark = {};
  private _incarnation: string | undefined;
  /** Cursor of the last accepted event with an id. */
  lastEventId: string | undefined;

  constructor(
    readonly sessionId: string,
    incarnation: string | undefined,
    opts: ForkGuardOptions = {},
  ) {
    this._incarnation = incarnation;
    this.seen = new BoundedMap(opts.maxSeenEvents ?? 4096);
    this.streams = new BoundedMap(opts.maxStreams ?? 256);
    this.key = opts.sessionKey;
  }

  get incarnation(): string | undefined {
    return this._incarnation;
  }

  /** A copy of the highest sequences accepted on this session, per id shape. */
  highWaterMark(): HighWaterMark {
    return { ...this.high };
  }

  /**
   * Checks an incarnation the server announced. The first one known is adopted (a server may
   * send it only once the guard saw its first response); a different one afterwards is a fork.
   */
  checkIncarnation(serverIncarnation: string | undefined, cursor = this.lastEventId): void {
    if (serverIncarnation === undefined) return;
    if (this._incarnation === undefined) {
      this._incarnation = serverIncarnation;
      return;
    }
    if (serverIncarnation !== this._incarnation) throw new SessionForkError('incarnation_changed', this.key, cursor);
  }

  /** The seed's `resume()` checks, in its order; on success arms the sequence check of the stream. */
  resume(answer: ResumeAnswer): void {
    const cursor = answer.lastEventId;
    if (answer.serverSessionId !== undefined && answer.serverSessionId !== this.sessionId) {
      throw new SessionForkError('session_id_changed', this.key, cursor);
    }
    this.checkIncarnation(answer.serverIncarnation, cursor);
    if (answer.serverLogHas === false) throw new SessionForkError('replay_gap', this.key, cursor);
    const parsed = parseEventId(cursor);
    const stream = this.stream(answer.streamId ?? '');
    if (parsed.seq === undefined || parsed.source === undefined) {
      stream.floor = undefined;
      return;
    }
    const streamLast = parsed.source === stream.lastSource ? stream.lastSeq : -1;
    if (parsed.seq < streamLast) {
      throw new SessionForkError('sequence_regression', this.key, cursor, `cursor ${parsed.seq} < last seen ${streamLast}`);
    }
    // The cursor, not the session's high-water mark: a true replay of this stream may carry
    // events numbered below another stream's latest (per-session counters interleave streams).
    stream.floor = { seqs: { [parsed.source]: Math.max(parsed.seq, streamLast) }, replay: true };
  }

  /**
   * Arms the check of a stream that starts now (a POST's SSE answer, or a GET without
   * `Last-Event-ID`): its first event with a sequence must be above `floor`.
   * @param floor the session's {@link highWaterMark} when the stream's request was sent (events
   *   delivered after that on other streams may be numbered above this stream's). Default: now.
   */
  openStream(streamId: string, floor: HighWaterMark = this.highWaterMark()): void {
    const stream = this.stream(streamId);
    stream.floor = Object.keys(floor).length > 0 ? { seqs: { ...floor }, replay: false } : undefined;
  }

  /**
   * The seed's `accept_event()`: false for an exact duplicate of an event already accepted under
   * this session and incarnation (drop it), true otherwise. Throws `sequence_regression` when an
   * armed stream's first events are numbered at or below its floor (see the class), or when an id
   * already accepted comes back with another payload; `incarnation_changed` when a guarded id
   * names another incarnation.
   * @param digest payload digest of the event's data (`payloadDigest`); undefined: unknown, then
   *   a repeated id counts as a duplicate except on a resumed stream at or below its cursor.
   */
  acceptEvent(eventId: string, streamId = '', digest?: string): boolean {
    const parsed = parseEventId(eventId);
    if (parsed.incarnation !== undefined && this._incarnation !== undefined && parsed.incarnation !== this._incarnation) {
      throw new SessionForkError('incarnation_changed', this.key, this.lastEventId, 'event id names another incarnation');
    }
    const dedupKey = `${this.sessionId}\u0000${this._incarnation ?? ''}\u0000${eventId}`;
    const prior = this.seen.get(dedupKey);
    const sameDigest = prior !== undefined && prior !== '' && digest !== undefined && prior === digest;
    const stream = this.stream(streamId);
    const floor = stream.floor;
    if (floor) {
      const limit = parsed.source !== undefined ? floor.seqs[parsed.source] : undefined;
      if (parsed.seq !== undefined && limit !== undefined && parsed.seq <= limit) {
        // A resumed stream may repeat what was delivered: only a byte-identical repeat is one.
        if (floor.replay && sameDigest) return false;
        throw new SessionForkError(
          'sequence_regression',
          this.key,
          this.lastEventId,
          `event ${eventId} at or below ${floor.replay ? 'the resume cursor' : "the session's high-water mark"} ${limit}`,
        );
      }
      // The first event above the floor (or one that cannot be compared) ends the check.
      stream.floor = undefined;
    }
    if (prior !== undefined) {
      if (prior !== '' && digest !== undefined && prior !== digest) {
        throw new SessionForkError('sequence_regression', this.key, this.lastEventId, `event id ${eventId} reused with another payload`);
      }
      return false;
    }
    this.seen.set(dedupKey, digest ?? '');
    if (parsed.seq !== undefined && parsed.source !== undefined) {
      if (parsed.source !== stream.lastSource) stream.lastSeq = parsed.seq;
      else stream.lastSeq = Math.max(stream.lastSeq, parsed.seq);
      stream.lastSource = parsed.source;
      this.high[parsed.source] = Math.max(this.high[parsed.source] ?? -1, parsed.seq);
    }
    this.lastEventId = eventId;
    return true;
  }

  private stream(id: string): StreamState {
    return this.streams.getOrCreate(id, () => ({ lastSeq: -1, lastSource: undefined }));
  }
}
