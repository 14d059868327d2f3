import type { SessionLineage } from '../model/lineage.js';
import type { SpanRecord } from '../model/span-record.js';
import { ATTR_SESSION_KEY, ATTR_SIDE } from '@forkwatch/instrumentation/semconv';
import { attachKept, heldLineage, lineageToKeep } from './engine-lineage.js';
import { compactSession, isLive, unsettledRequests } from './compact-session.js';
import type { EngineOptions } from './engine-options.js';
import { DEFAULT_ENGINE_OPTIONS } from './engine-options.js';
import { newRecordResult, recordSpan } from './record-span.js';
import type { CompactSession, SessionState } from './session-state.js';
import { reportDecision, resolveOrphans, type DecisionSink } from './report-decision.js';
import { decodeSavedSession, isBinaryState, takeSavedSessions, type SavedSession } from './codec/saved-session.js';
import { StateJournal } from './codec/state-journal.js';
import { newSessionState } from './session-state.js';
import { StatelessTracker } from './stateless/stateless-tracker.js';
import { usefulWithoutSession } from './useful-without-session.js';
import { restartsDecisionWindow } from './window-moments.js';
import { DecisionQueue } from './decision-queue.js';
import { OrderedTable } from './oldest-entry.js';
import type { Clock, DropReason, EngineListener, EngineStats } from './types.js';

/** Prefix of the pseudo session key under which spans without `forkwatch.session.key` are correlated (per trace). */
export const STATELESS_KEY_PREFIX = '~stateless:';

/**
 * Correlates forkwatch spans per session key into fork findings, orphaned progress tokens and
 * resume outcomes. Single-threaded and synchronous: time only moves through the injected clock
 * and {@link CorrelationEngine.tick}; no timers, no Date.now.
 */
export class CorrelationEngine {
  private readonly opts: EngineOptions;
  /** Sessions with full state, least recently updated first (the oldest found for eviction without a walk: OrderedTable). */
  private readonly full = new OrderedTable<SessionState>();
  /** Decided idle sessions reduced to summaries, least recently updated first. */
  private readonly compacted = new OrderedTable<CompactSession>();
  private readonly pending = new DecisionQueue();
  private readonly dirty = new Set<string>();
  private readonly orphaned = new Map<string, number>();
  private eventCount = 0;
  private pendingRequestCount = 0;
  private readonly scratch = newRecordResult();
  /** What each session's next save is written against (delta or whole). */
  private readonly journal = new StateJournal();
  /**
   * Lineages of sessions with findings, taken whole when they were compacted or dropped, until
   * {@link takeDirty} hands them to storage (which bounds them): the evidence outlives the state.
   */
  private readonly kept = new Map<string, SessionLineage>();
  // The session of the previous span of the batch being ingested: a batch holds runs of spans of
  // one session (each exporter batches its own spans), and a run then costs no Map lookups.
  // Valid within one ingest() call; forget() clears it, so it never holds a dropped session.
  private runKey: string | undefined;
  private runSession: SessionState | undefined;
  /** Whether runSession was already refreshed in this batch (see ingestOne). */
  private runTouched = false;
  private readonly sink: DecisionSink = {
    countOrphan: (service, delta) => this.countOrphan(service, delta),
    onFinding: (f, isNew, lagMs) => this.call(() => this.listener.onFinding?.(f, isNew, { lagMs })),
    onFindingResolved: (f) => this.call(() => this.listener.onFindingResolved?.(f)),
    onResume: (outcome, service, traceId) => this.call(() => this.listener.onResume?.(outcome, service, traceId)),
  };
  /** Keyless request spans of the stateless transport: orphaned requests, duplicates, late work. */
  private readonly stateless: StatelessTracker;

  constructor(
    private readonly clock: Clock,
    private readonly listener: EngineListener = {},
    options: Partial<EngineOptions> = {},
  ) {
    this.opts = { ...DEFAULT_ENGINE_OPTIONS, ...options };
    this.stateless = new StatelessTracker(this.opts, (f, lagMs) => this.call(() => this.listener.onFinding?.(f, true, { lagMs })));
  }

  /** Takes decoded forkwatch spans in any order; spans it cannot use are ignored. Never throws. */
  ingest(spans: SpanRecord[]): void {
    const now = this.clock.now();
    const touched = new Set<string>();
    this.runKey = undefined;
    for (const span of spans) {
      try {
        this.ingestOne(span, now, touched);
      } catch {
        // A malformed span must not stop the batch; what it lacked is simply not correlated.
      }
    }
    this.runKey = undefined;
    this.runSession = undefined;
  }

  /**
   * Decides sessions whose decision window has elapsed, expires idle sessions, compacts decided
   * idle ones. With `sliceMs`, stops after about that much wall time and returns false: call
   * again (after yielding the event loop) for the rest. True when everything due was done.
   */
  tick(sliceMs = Infinity): boolean {
    const now = this.clock.now();
    this.stateless.tick(now);
    // Under a backlog the work is cut at sliceMs of wall time; what is left waits for the next call.
    const until = sliceMs === Infinity ? Infinity : performance.now() + sliceMs;
    let n = 0;
    const over = (): boolean => (++n & 63) === 0 && performance.now() > until;
    const sinceOf = (key: string): number | undefined => {
      const s = this.full.get(key);
      return s === undefined ? undefined : (s.pendingSinceMs ?? now);
    };
    if (!this.pending.scan(now, this.opts.decisionWindowMs, sinceOf, (key) => this.decideSafely(this.full.get(key)!, now), over)) return false;
    for (const [key, s] of this.full) {
      if (over()) return false;
      if (now - s.lastActivityMs < this.opts.sessionTtlMs) break;
      this.remove(key, 'session_expired', now);
    }
    for (const [key, c] of this.compacted) {
      if (over()) return false;
      if (now - c.lastActivityMs < this.opts.sessionTtlMs) break;
      this.remove(key, 'session_expired', now);
    }
    for (const [key, s] of this.full) {
      if (over()) return false;
      if (now - s.lastActivityMs < this.opts.compactAfterMs) break;
      if (this.pending.has(key)) continue;
      this.compact(s);
    }
    return true;
  }

  /** Decides every pending session now, window or not (offline analysis, shutdown). */
  decideAll(): void {
    const now = this.clock.now();
    this.stateless.tick(now, true);
    for (const key of this.pending.snapshot()) {
      const s = this.full.get(key);
      if (s !== undefined) this.decideSafely(s, now);
      else this.pending.delete(key);
    }
  }

  stats(): EngineStats {
    const active = new Map<string, number>();
    const countLive = (svc: string): void => {
      active.set(svc, (active.get(svc) ?? 0) + 1);
    };
    for (const s of this.full.values()) {
      if (isLive(s)) countLive(s.serverService ?? s.clientService ?? 'unknown_service');
    }
    for (const c of this.compacted.values()) if (c.live) countLive(c.serverService ?? c.clientService ?? 'unknown_service');
    const orphanedByService = new Map<string, number>();
    for (const [svc, n] of this.orphaned) if (n > 0) orphanedByService.set(svc, n);
    return {
      sessions: this.full.size + this.compacted.size,
      events: this.eventCount,
      pendingRequests: this.pendingRequestCount,
      activeSessionsByService: active,
      orphanedByService,
    };
  }

  /**
   * What the engine knows of one session key, or undefined when it tracks none: `source` `live`
   * (its full state) or `compacted` (its summary, with the lineage kept at compaction while that
   * is not yet handed to storage; the caller merges what storage kept).
   */
  lineage(key: string): SessionLineage | undefined {
    return heldLineage(this.full.get(key), this.compacted.get(key), this.kept.get(key), this.opts.maxKeptEvents);
  }


  /**
   * The saved form of every session changed since the last call (see takeSavedSessions): at most
   * `max` sessions (default all) and about `maxBytes` of saved forms (default no limit); the rest
   * stay dirty for the next call, so a large backlog can be saved in slices. The deltas of a call
   * must be stored (or merged in order with the next call's) for later ones to apply.
   */
  takeDirty(max = Infinity, maxBytes = Infinity): SavedSession[] {
    const out = takeSavedSessions(this.dirty, this.full, this.compacted, this.journal, max, maxBytes);
    attachKept(out, this.kept);
    return out;
  }

  /** Sessions changed since the last {@link takeDirty}. */
  get dirtyCount(): number {
    return this.dirty.size;
  }

  /**
   * Reinstates a session saved by {@link takeDirty} (after a restart): its whole state and the
   * deltas appended to its log since, in order. A decision that was pending stays pending and is
   * made by the next tick whose window has elapsed.
   * @throws ForkwatchError FORKWATCH_ERR_STORAGE when `state` and `log` are not a saved session.
   */
  restore(key: string, state: string | Uint8Array, log: readonly Uint8Array[] = []): void {
    const s = decodeSavedSession(key, state, log);
    s.key = key;
    this.uncountOrphans(key);
    this.forget(key);
    if ('compact' in s) {
      this.compacted.set(key, s);
      this.pendingRequestCount += s.requests?.length ?? 0;
    } else {
      this.full.set(key, s);
      this.eventCount += s.events.length;
      this.pendingRequestCount += unsettledRequests(s);
      if (s.pendingSinceMs !== undefined) this.pending.add(key, s.pendingSinceMs);
      // Saved as it now is: the next save can be a delta.
      if (isBinaryState(state)) this.journal.restored(s, state, log);
    }
    for (const e of Object.values(s.emitted)) {
      if (e.counting === true && e.finding !== undefined) this.countOrphan(e.finding.service, 1);
    }
    this.enforceCapacity(key, this.clock.now());
  }

  // ---------------------------------------------------------------------------------------------

  /** `touched`: keys already refreshed in this batch (same clock reading), to refresh each once. */
  private ingestOne(span: SpanRecord, now: number, touched: Set<string>): void {
    const a = span.attributes;
    const side = a[ATTR_SIDE];
    if (side !== 'client' && side !== 'server') return;
    const rawKey = a[ATTR_SESSION_KEY];
    const stateless = typeof rawKey !== 'string' || rawKey === '';
    if (stateless && StatelessTracker.accepts(span)) this.stateless.ingest(span, side, now);
    if (stateless && !usefulWithoutSession(span)) return;
    const key = stateless ? `${STATELESS_KEY_PREFIX}${span.traceId}` : rawKey;
    let s = this.runSession;
    if (key !== this.runKey || s === undefined) {
      if (!this.full.has(key)) touched.delete(key); // evicted earlier in this batch: refresh it again
      s = this.sessionFor(key, stateless, now);
      this.runKey = key;
      this.runSession = s;
      this.runTouched = touched.has(key);
    }
    const r = recordSpan(s, span, side, now, this.opts, this.scratch);
    if (!r.kept) return;
    this.eventCount += r.eventsAdded;
    if (this.eventCount > this.opts.maxTrackedEvents) this.enforceEventCapacity(key, now);
    this.pendingRequestCount += r.pendingRequestsDelta;
    if (r.eventsDropped > 0) this.drop('events_per_session', r.eventsDropped);
    if (r.request !== undefined) this.journal.request(s, r.request, r.requestAdded);
    if (r.requestsDropped > 0) this.drop('requests_per_session', r.requestsDropped);
    if (!this.runTouched) {
      this.runTouched = true;
      touched.add(key);
      s.lastActivityMs = now;
      // Re-insert: the map stays ordered by last activity, which tick's scans rely on.
      this.full.delete(key);
      this.full.set(key, s);
      s.pendingSinceMs ??= now;
      this.pending.add(key, s.pendingSinceMs);
      this.dirty.add(key);
    }
    if (s.pendingSinceMs !== undefined && s.pendingSinceMs < now && restartsDecisionWindow(span.name)) {
      s.pendingSinceMs = now;
      this.pending.requeue(key, now);
    }
    if (r.settledRequestId !== undefined) {
      resolveOrphans(s, r.settledRequestId, now, this.sink);
      this.journal.analysed(s);
    }
  }

  private sessionFor(key: string, stateless: boolean, now: number): SessionState {
    const s = this.full.get(key);
    if (s !== undefined) return s;
    const c = this.compacted.get(key);
    const fresh = newSessionState(key, stateless, now);
    if (c !== undefined) {
      // A compacted session woke up: continue from its summary.
      this.compacted.delete(key);
      if (c.serverService !== undefined) fresh.serverService = c.serverService;
      if (c.clientService !== undefined) fresh.clientService = c.clientService;
      if (c.clientBaseline !== undefined) fresh.clientBaseline = c.clientBaseline;
      fresh.knownIncarnations = c.knownIncarnations;
      fresh.emitted = c.emitted;
      for (const r of c.requests ?? []) fresh.requests.set(r.requestId, r);
    }
    this.full.set(key, fresh);
    if (c === undefined) this.enforceCapacity(key, now);
    return fresh;
  }

  private enforceCapacity(keep: string, now: number): void {
    while (this.full.size + this.compacted.size > this.opts.maxSessions) {
      const f = this.full.oldest(keep);
      const c = this.compacted.oldest(keep);
      const victim = f === undefined ? c?.[0] : c === undefined ? f[0] : c[1].lastActivityMs <= f[1].lastActivityMs ? c[0] : f[0];
      if (victim === undefined) return;
      this.remove(victim, 'session_capacity', now);
    }
  }

  /** Evicts the least recently updated sessions (never `keep`, the one being written) until the events held fit. */
  private enforceEventCapacity(keep: string, now: number): void {
    while (this.eventCount > this.opts.maxTrackedEvents) {
      const f = this.full.oldest(keep);
      if (f === undefined) return;
      this.remove(f[0], 'event_capacity', now);
    }
  }

  /** Drops a session for space or age, deciding first what it still had pending. */
  private remove(key: string, reason: DropReason, now: number): void {
    const s = this.full.get(key);
    if (s !== undefined && this.pending.has(key)) this.decideSafely(s, now);
    if (s !== undefined) this.keepLineage(s);
    // Unresolved orphans of a dropped session stop counting as orphaned now.
    this.uncountOrphans(key);
    this.forget(key);
    this.dirty.add(key);
    this.drop(reason, 1);
  }

  private uncountOrphans(key: string): void {
    const emitted = (this.full.get(key) ?? this.compacted.get(key))?.emitted;
    if (emitted === undefined) return;
    for (const e of Object.values(emitted)) {
      if (e.counting === true && e.finding !== undefined) {
        e.counting = false;
        this.countOrphan(e.finding.service, -1);
      }
    }
  }

  private forget(key: string): void {
    if (key === this.runKey) this.runKey = undefined;
    const s = this.full.get(key);
    if (s !== undefined) {
      this.eventCount -= s.events.length;
      this.pendingRequestCount -= unsettledRequests(s);
    }
    this.pendingRequestCount -= this.compacted.get(key)?.requests?.length ?? 0;
    this.full.delete(key);
    this.compacted.delete(key);
    this.pending.delete(key);
    this.journal.forget(key);
  }

  /** A session with findings about to lose its full state: its lineage goes to storage with them. */
  private keepLineage(s: SessionState): void {
    const l = lineageToKeep(s, this.kept.get(s.key));
    if (l !== undefined) this.kept.set(s.key, l);
  }

  private compact(s: SessionState): void {
    this.keepLineage(s);
    const c = compactSession(s, this.opts.maxIncarnationsPerSession);
    this.forget(s.key);
    this.compacted.set(s.key, c);
    this.pendingRequestCount += c.requests?.length ?? 0;
    this.dirty.add(s.key);
  }

  /** One session's state must not stop the decisions on all others (e.g. a hand-edited restore). */
  private decideSafely(s: SessionState, now: number): void {
    try {
      this.decide(s, now);
    } catch {
      this.pending.delete(s.key);
      delete s.pendingSinceMs;
    }
  }

  /**
   * A decision that reported nothing (a healthy session's) changed only the pending flag: it is
   * not saved. The stored state keeps the flag, so after a restart the session is pending again
   * and decided again (see restore), reporting the same nothing; its next span or its compaction
   * saves it as it is. A decision that reported anything is saved with its emitted findings and
   * counted resumes, so that a restart repeats none of them.
   */
  private decide(s: SessionState, now: number): void {
    this.pending.delete(s.key);
    delete s.pendingSinceMs;
    let reported = true;
    try {
      reported = reportDecision(s, now, this.sink);
    } finally {
      if (reported) {
        this.dirty.add(s.key);
        this.journal.analysed(s);
      }
    }
  }

  private countOrphan(service: string, delta: number): void {
    this.orphaned.set(service, Math.max(0, (this.orphaned.get(service) ?? 0) + delta));
  }

  private drop(reason: DropReason, n: number): void {
    this.call(() => this.listener.onDrop?.(reason, n));
  }

  /** Listeners are other parts of the detector: their failure must not corrupt the engine's state. */
  private call(fn: () => void): void {
    try {
      fn();
    } catch {
      // deliberately ignored: see above
    }
  }
}
