import { newIncarnation } from './building-blocks.js';
import { newSessionHistory, type SessionHistory } from './event-history.js';
import { SessionEventLog } from './session-event-log.js';

/** A resume whose outcome waits for the first event that shows whether the log continued. */
export interface PendingResume {
  lastEventId: string;
  status: number;
  method: string;
  protocolVersion: string | undefined;
  at: number;
}

/** What the proxy knows of one session id, for the incarnation it is in now. */
export interface ProxySession {
  readonly id: string;
  /** Minted by the proxy per incarnation; sent on the wire only under `--guard`. */
  incarnation: string;
  log: SessionEventLog;
  /** The proxy saw this incarnation begin (an answer introduced the id); false when adopted mid-life. */
  seenCreated: boolean;
  /** Under `--guard`: the proxy refused a forked answer; every later request gets 404 without going upstream. */
  lost: boolean;
  /** The upstream answered with event ids at least once: its SSE answers are worth holding under `--guard`. */
  sendsIds: boolean;
  /** A request of the session could not reach the upstream (connection refused or failed): it may have restarted since. */
  upstreamDown: boolean;
  pendingResume: PendingResume | undefined;
  /** Recent events waiting for a moment (event-history.ts); kept across incarnations of the id. */
  history: SessionHistory;
  lastUsedMs: number;
}

/**
 * The sessions the proxy tracks, bounded in count (`maxSessions`, least recently used forgotten
 * first) and time (`idleTtlMs` without a request). Forgetting is not an end of the session (the
 * upstream may still hold it): no span is emitted for it.
 */
export class SessionTable {
  private readonly sessions = new Map<string, ProxySession>();
  /** The session last inserted (the most recently used): touched again, it stays in place. */
  private newest: ProxySession | undefined;
  /** Sessions forgotten for the count bound or idleness. */
  forgotten = 0;
  private lastSweepMs = 0;

  constructor(
    private readonly maxSessions: number,
    private readonly idleTtlMs: number,
    private readonly maxEventIds: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /** The session, touched (most recently used); undefined when unknown. */
  get(id: string): ProxySession | undefined {
    const s = this.sessions.get(id);
    if (s === undefined) return undefined;
    const now = this.now();
    if (now - s.lastUsedMs > this.idleTtlMs) {
      this.sessions.delete(id);
      this.forgotten++;
      return undefined;
    }
    s.lastUsedMs = now;
    // Re-insert so insertion order is recency order (the eviction walk takes the first); the
    // newest already stands last (a session's calls mostly follow each other).
    if (s !== this.newest) {
      this.sessions.delete(id);
      this.sessions.set(id, s);
      this.newest = s;
    }
    return s;
  }

  /** Starts tracking `id` (or a new incarnation of it), evicting as the bounds say. */
  create(id: string, seenCreated: boolean): ProxySession {
    const now = this.now();
    this.sweep(now);
    this.sessions.delete(id);
    while (this.sessions.size >= this.maxSessions) {
      const oldest = this.sessions.keys().next();
      if (oldest.done) break;
      this.sessions.delete(oldest.value);
      this.forgotten++;
    }
    const s: ProxySession = {
      id,
      incarnation: newIncarnation(),
      log: new SessionEventLog(this.maxEventIds),
      seenCreated,
      lost: false,
      sendsIds: false,
      upstreamDown: false,
      pendingResume: undefined,
      history: newSessionHistory(),
      lastUsedMs: now,
    };
    this.sessions.set(id, s);
    this.newest = s;
    return s;
  }

  /** A new life of the same id: fresh incarnation and log, same object (streams in flight keep it). */
  reincarnate(s: ProxySession): void {
    s.incarnation = newIncarnation();
    s.log = new SessionEventLog(this.maxEventIds);
    s.seenCreated = true;
  }

  delete(id: string): void {
    this.sessions.delete(id);
    if (this.newest?.id === id) this.newest = undefined;
  }

  /** Drops idle sessions, at most once per tenth of the TTL (they are in recency order). */
  private sweep(now: number): void {
    if (now - this.lastSweepMs < this.idleTtlMs / 10) return;
    this.lastSweepMs = now;
    for (const [id, s] of this.sessions) {
      if (now - s.lastUsedMs <= this.idleTtlMs) break;
      this.sessions.delete(id);
      this.forgotten++;
    }
  }
}
