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

interface StreamState {
  lastSeq: number;
  lastSource: ParsedEventId['source'];
  /** Set by a resume until the first event after it: the cursor's sequence and id shape. */
  resumeFloor?: { seq: number; source: ParsedEventId['source'] };
}

/**
 * The seed's `ResumableStream` (docs/MISSION.md) for one session: `resume()` refuses a resume that
 * would fork, `acceptEvent()` dedups on `(session, incarnation, event id)` and raises on a sequence
 * that goes backwards after a resume. Sequence checks work on guarded ids (`<incarnation>-<n>`)
 * and plain counters (`e7`), so they hold against servers that send no incarnation.
 */
export class ForkGuard {
  private readonly seen: BoundedMap<string, true>;
  private readonly streams: BoundedMap<string, StreamState>;
  private readonly key: string | undefined;
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
    if (parsed.seq !== undefined && parsed.source === stream.lastSource && parsed.seq < stream.lastSeq) {
      throw new SessionForkError('sequence_regression', this.key, cursor, `cursor ${parsed.seq} < last seen ${stream.lastSeq}`);
    }
    if (parsed.seq !== undefined) stream.resumeFloor = { seq: Math.max(parsed.seq, stream.lastSeq), source: parsed.source };
  }

  /**
   * The seed's `accept_event()`: false for an event already accepted under this session and
   * incarnation (drop it), true otherwise. Throws `sequence_regression` when the first event
   * after a resume is numbered below the cursor, `incarnation_changed` when a guarded id names
   * another incarnation.
   */
  acceptEvent(eventId: string, streamId = ''): boolean {
    const parsed = parseEventId(eventId);
    if (parsed.incarnation !== undefined && this._incarnation !== undefined && parsed.incarnation !== this._incarnation) {
      throw new SessionForkError('incarnation_changed', this.key, this.lastEventId, 'event id names another incarnation');
    }
    const stream = this.stream(streamId);
    const floor = stream.resumeFloor;
    if (floor) {
      stream.resumeFloor = undefined;
      if (parsed.seq !== undefined && parsed.source === floor.source && parsed.seq < floor.seq) {
        throw new SessionForkError('sequence_regression', this.key, this.lastEventId, `event ${parsed.seq} after cursor ${floor.seq}`);
      }
    }
    const dedupKey = `${this.sessionId}\u0000${this._incarnation ?? ''}\u0000${eventId}`;
    if (this.seen.has(dedupKey)) return false;
    this.seen.set(dedupKey, true);
    if (parsed.seq !== undefined) {
      if (parsed.source !== stream.lastSource) stream.lastSeq = parsed.seq;
      else stream.lastSeq = Math.max(stream.lastSeq, parsed.seq);
      stream.lastSource = parsed.source;
    }
    this.lastEventId = eventId;
    return true;
  }

  private stream(id: string): StreamState {
    return this.streams.getOrCreate(id, () => ({ lastSeq: -1, lastSource: undefined }));
  }
}
