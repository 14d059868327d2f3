import type { DiagLogger } from '@opentelemetry/api';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Finding } from '../model/finding.js';
import type { SpanRecord } from '../model/span-record.js';
import type { IngestRefusal } from '../otlp/ingest-sink.js';
import type { SessionStateChange, Store } from '../storage/store.js';
import { mergeLineages } from '../correlate/kept-lineage.js';

/** What the pipeline needs of the correlation engine. */
export interface EnginePort {
  ingest(spans: SpanRecord[]): void;
  /** False when cut short after about `sliceMs` of work; the pipeline calls again after yielding. */
  tick(sliceMs?: number): boolean | void;
  /** At most `max` sessions, and no more once their saved forms reach `maxBytes` (at least one is taken). */
  takeDirty(max?: number, maxBytes?: number): SessionStateChange[];
  /** Sessions waiting for {@link takeDirty}; when absent, a backlog is not sliced. */
  readonly dirtyCount?: number;
}

export interface IngestPipelineOptions {
  engine: EnginePort;
  store: Pick<Store, 'commit'> & Partial<Pick<Store, 'checkpoint'>>;
  /** Spans accepted but not yet committed before `offer` answers 'overloaded'. */
  maxQueuedSpans: number;
  /** Group-commit interval, ms: requests arriving within it share one SQLite transaction. */
  commitIntervalMs: number;
  logger: DiagLogger;
  onQueueSize?(spans: number): void;
  onStorageError?(err: unknown): void;
}

/** Delay before a failed commit is first retried, ms; it doubles on each failure up to STORAGE_RETRY_MAX_MS. */
export const STORAGE_RETRY_MS = 1000;
/** Longest delay between storage retries, ms. */
export const STORAGE_RETRY_MAX_MS = 30_000;
/**
 * Most session states saved per SQLite transaction: a large backlog is committed in slices with
 * the event loop free between them (a 130-state commit of whole states held it for over 100 ms
 * under load, and /healthz waited behind it). {@link COMMIT_SLICE_BYTES} usually ends a slice
 * first.
 */
export const COMMIT_SLICE_STATES = 1024;
/**
 * Bytes of saved session state (whole states and deltas) per SQLite transaction, 256 KiB: the
 * work of a slice grows with its bytes, not its count. A slice of 16 states made about 20 times
 * as many transactions as commits at 100 % forkwatch spans (a delta is a few hundred bytes), and
 * each transaction's fixed cost (BEGIN, COMMIT, the WAL's page writes) was most of SQLite's CPU.
 */
export const COMMIT_SLICE_BYTES = 256 * 1024;
/** Spans correlated in one go; a larger batch is cut, the event loop yielded between slices. */
export const INGEST_SLICE_SPANS = 2048;
/** Longest stretch of the engine's time-based work before the event loop is yielded, ms. */
export const TICK_SLICE_MS = 20;

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
  spans: number;
}

/**
 * decode → **correlate → persist**: spans are correlated synchronously as they arrive (cheap,
 * in memory), and the resulting state changes and findings are written in group commits. An OTLP
 * request is acknowledged only after the commit holding its effects returned, so a killed
 * process loses nothing it acknowledged, while SQLite sees one transaction per interval rather
 * than per request.
 */
export class IngestPipeline {
  private readonly findings = new Map<string, Finding>();
  private waiters: Waiter[] = [];
  private queuedSpans = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Set while the last commit failed; new batches are refused until one succeeds. */
  storageFailing = false;
  /** What the last failed commit said, while {@link storageFailing}. */
  storageError: string | undefined;
  private retryDelayMs = STORAGE_RETRY_MS;

  constructor(private readonly opts: IngestPipelineOptions) {}

  /** Records a finding (new or updated) for the next commit. */
  addFinding(finding: Finding): void {
    this.findings.set(finding.id, finding);
    this.schedule();
  }

  /**
   * Correlates `spans` and resolves once their effects are committed; 'overloaded' when the
   * uncommitted backlog is full or storage is failing (the receiver answers 503 + Retry-After).
   */
  offer(spans: SpanRecord[]): Promise<void> | IngestRefusal {
    if (this.storageFailing) return { storage: this.storageError ?? 'commit failed' };
    if (this.closed || this.queuedSpans + spans.length > this.opts.maxQueuedSpans) return 'overloaded';
    this.queuedSpans += spans.length;
    this.opts.onQueueSize?.(this.queuedSpans);
    if (spans.length <= INGEST_SLICE_SPANS) {
      if (spans.length > 0) this.opts.engine.ingest(spans);
      return this.await(spans.length);
    }
    return this.ingestSliced(spans);
  }

  /** A large batch is correlated in slices, the event loop free between them, then awaits its commit. */
  private async ingestSliced(spans: SpanRecord[]): Promise<void> {
    for (let i = 0; i < spans.length; i += INGEST_SLICE_SPANS) {
      if (i > 0) await yieldToLoop();
      this.opts.engine.ingest(spans.slice(i, i + INGEST_SLICE_SPANS));
    }
    return this.await(spans.length);
  }

  private await(spans: number): Promise<void> {
    if (this.storageFailing) {
      // Storage failed while this batch was being correlated: refused like the batches that were waiting.
      this.queuedSpans = Math.max(0, this.queuedSpans - spans);
      return Promise.reject(new Error('storage failing'));
    }
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ resolve, reject, spans });
      this.schedule();
    });
  }

  /** Runs the engine's time-based decisions; their findings go out with the next commit. */
  tick(): void {
    if (this.ticking) return;
    if (this.opts.engine.tick(TICK_SLICE_MS) === false) {
      this.ticking = true;
      setImmediate(() => {
        this.ticking = false;
        if (!this.closed) this.tick();
      });
    }
    this.schedule();
  }

  private ticking = false;

  private schedule(): void {
    if (this.timer || this.closed || this.flushing) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flushSliced();
    }, this.opts.commitIntervalMs);
    // Not unref'd: while it is armed there is uncommitted work that must not be abandoned.
  }

  private flushing = false;

  /**
   * The timer's commit: the same as {@link flush}, in transactions of at most
   * COMMIT_SLICE_STATES states and about COMMIT_SLICE_BYTES bytes of them, with the event loop
   * free between them. The waiters of the batch
   * are answered once every slice is in; a crash between slices loses nothing acknowledged.
   */
  private async flushSliced(): Promise<void> {
    const waiters = this.waiters;
    const findings = [...this.findings.values()];
    // States dirtied while slicing belong to later requests: slicing stops at what was there.
    let left = this.opts.engine.dirtyCount ?? Infinity;
    let states = this.opts.engine.takeDirty(COMMIT_SLICE_STATES, COMMIT_SLICE_BYTES);
    if (waiters.length === 0 && findings.length === 0 && states.length === 0) return;
    this.flushing = true;
    this.waiters = [];
    this.findings.clear();
    try {
      this.commitSlice(findings, states);
      left -= states.length;
      // Without a dirtyCount, a short slice means nothing was left.
      while (left > 0 && !this.closed && (states.length === COMMIT_SLICE_STATES || this.opts.engine.dirtyCount !== undefined)) {
        await yieldToLoop();
        states = this.opts.engine.takeDirty(Math.min(COMMIT_SLICE_STATES, left), COMMIT_SLICE_BYTES);
        if (states.length === 0) break;
        this.commitSlice([], states);
        left -= states.length;
      }
    } catch (err) {
      for (const f of findings) if (!this.findings.has(f.id)) this.findings.set(f.id, f);
      this.fail(err, waiters);
      return;
    } finally {
      this.flushing = false;
    }
    this.answered(waiters);
    if (this.waiters.length > 0 || this.findings.size > 0 || (this.opts.engine.dirtyCount ?? 0) > 0) this.schedule();
  }

  /** Commits one slice; on failure the states are kept for the retry and the error rethrown. */
  private commitSlice(findings: Finding[], states: SessionStateChange[]): void {
    try {
      this.opts.store.commit({ findings, states });
    } catch (err) {
      this.pendingStates = mergeStates(this.pendingStates, states);
      throw err;
    }
  }

  private answered(waiters: Waiter[]): void {
    let spans = 0;
    for (const w of waiters) spans += w.spans;
    this.queuedSpans = Math.max(0, this.queuedSpans - spans);
    this.opts.onQueueSize?.(this.queuedSpans);
    for (const w of waiters) w.resolve();
  }

  /** Storage failed: every waiting request is refused (its exporter retries) until a retry succeeds. */
  private fail(err: unknown, waiters: Waiter[]): void {
    this.storageFailing = true;
    this.storageError = describe(err);
    this.opts.onStorageError?.(err);
    this.opts.logger.error('commit failed; will retry', err);
    const all = waiters.concat(this.waiters);
    this.waiters = [];
    this.queuedSpans = 0;
    this.opts.onQueueSize?.(0);
    for (const w of all) w.reject(err);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.scheduleRetry();
  }

  /** Commits everything pending now. Returns false when the commit failed (kept for retry). */
  flush(): boolean {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const waiters = this.waiters;
    const states = this.opts.engine.takeDirty();
    const findings = [...this.findings.values()];
    if (waiters.length === 0 && states.length === 0 && findings.length === 0) return true;
    this.waiters = [];
    try {
      this.commitSlice(findings, states);
    } catch (err) {
      // Keep the findings; the states were kept by commitSlice (whole states and the deltas
      // written against them): the next successful commit writes them with what came since.
      this.fail(err, waiters);
      return false;
    }
    this.findings.clear();
    this.answered(waiters);
    return true;
  }

  private pendingStates: SessionStateChange[] = [];

  private retry(): void {
    // A full disk leaves the freed space inside the WAL: give it back before writing again.
    try {
      this.opts.store.checkpoint?.();
    } catch (err) {
      this.opts.logger.warn('checkpoint before retry failed', err);
    }
    const states = mergeStates(this.pendingStates, this.opts.engine.takeDirty());
    try {
      this.opts.store.commit({ findings: [...this.findings.values()], states });
      this.pendingStates = [];
      this.findings.clear();
      this.storageFailing = false;
      this.storageError = undefined;
      this.retryDelayMs = STORAGE_RETRY_MS;
      this.opts.logger.info('storage recovered');
    } catch (err) {
      this.pendingStates = states;
      this.storageError = describe(err);
      this.opts.onStorageError?.(err);
      this.retryDelayMs = Math.min(STORAGE_RETRY_MAX_MS, this.retryDelayMs * 2);
      this.scheduleRetry();
    }
  }

  /** Storage failed: retry after a backoff, while new batches are refused (503 naming the storage error). */
  private scheduleRetry(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.retry();
    }, this.retryDelayMs);
  }

  /** Stops accepting, commits what is in hand. */
  close(): boolean {
    this.closed = true;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.storageFailing) {
      this.retry();
      return !this.storageFailing;
    }
    return this.flush();
  }
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown } };
  const code = typeof e?.cause?.code === 'string' ? e.cause.code : typeof e?.code === 'string' ? e.code : undefined;
  const msg = typeof e?.message === 'string' ? e.message : String(err);
  return code && !msg.includes(code) ? `${code}: ${msg}` : msg;
}

/**
 * `a` then `b` as one list of changes: a later whole state (or deletion) replaces what came
 * before for its key; chunks appended later follow the earlier ones (the engine wrote each
 * against the state that the earlier ones end in).
 */
const UNBOUNDED = { maxEvents: Infinity, maxIncarnations: Infinity, maxResumes: Infinity, maxRequests: Infinity };

function mergeStates(a: SessionStateChange[], b: SessionStateChange[]): SessionStateChange[] {
  if (a.length === 0) return b;
  const byKey = new Map<string, SessionStateChange>();
  for (const s of a) byKey.set(s.key, s);
  for (const s of b) {
    const prev = byKey.get(s.key);
    let next: SessionStateChange;
    if (prev === undefined || s.state !== undefined || s.log === undefined) next = s;
    else {
      const log = [...(prev.log ?? []), ...s.log];
      next = prev.state === undefined ? { key: s.key, log } : { key: s.key, state: prev.state, log };
    }
    // A kept lineage is never replaced: the store merges each with what it holds, so do the same.
    const evidence = prev?.evidence === undefined ? s.evidence : s.evidence === undefined ? prev.evidence : mergeLineages(prev.evidence, s.evidence, UNBOUNDED);
    const out: SessionStateChange = { ...next };
    if (evidence === undefined) delete out.evidence;
    else out.evidence = evidence;
    byKey.set(s.key, out);
  }
  return [...byKey.values()];
}
