import type { DiagLogger } from '@opentelemetry/api';
import type { Finding } from '../model/finding.js';
import type { SpanRecord } from '../model/span-record.js';
import type { SessionStateChange, Store } from '../storage/store.js';

/** What the pipeline needs of the correlation engine. */
export interface EnginePort {
  ingest(spans: SpanRecord[]): void;
  tick(): void;
  takeDirty(): SessionStateChange[];
}

export interface IngestPipelineOptions {
  engine: EnginePort;
  store: Store;
  /** Spans accepted but not yet committed before `offer` answers 'overloaded'. */
  maxQueuedSpans: number;
  /** Group-commit interval, ms: requests arriving within it share one SQLite transaction. */
  commitIntervalMs: number;
  logger: DiagLogger;
  onQueueSize?(spans: number): void;
  onStorageError?(err: unknown): void;
}

/** Delay before a failed commit is retried, ms. */
const STORAGE_RETRY_MS = 1000;

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
  offer(spans: SpanRecord[]): Promise<void> | 'overloaded' {
    if (this.closed || this.storageFailing || this.queuedSpans + spans.length > this.opts.maxQueuedSpans) return 'overloaded';
    if (spans.length > 0) this.opts.engine.ingest(spans);
    this.queuedSpans += spans.length;
    this.opts.onQueueSize?.(this.queuedSpans);
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ resolve, reject, spans: spans.length });
      this.schedule();
    });
  }

  /** Runs the engine's time-based decisions; their findings go out with the next commit. */
  tick(): void {
    this.opts.engine.tick();
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.opts.commitIntervalMs);
    // Not unref'd: while it is armed there is uncommitted work that must not be abandoned.
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
    try {
      this.opts.store.commit({ findings, states });
    } catch (err) {
      // Keep the findings; the states go back by re-marking nothing: the engine still holds the
      // live state in memory and the next successful commit writes a superset.
      this.pendingStates = mergeStates(this.pendingStates, states);
      this.storageFailing = true;
      this.opts.onStorageError?.(err);
      this.opts.logger.error('commit failed; will retry', err);
      this.waiters = [];
      this.queuedSpans = 0;
      this.opts.onQueueSize?.(0);
      for (const w of waiters) w.reject(err);
      this.scheduleRetry();
      return false;
    }
    this.findings.clear();
    this.waiters = [];
    this.queuedSpans = 0;
    this.opts.onQueueSize?.(0);
    for (const w of waiters) w.resolve();
    return true;
  }

  private pendingStates: SessionStateChange[] = [];

  private retry(): void {
    const states = mergeStates(this.pendingStates, this.opts.engine.takeDirty());
    try {
      this.opts.store.commit({ findings: [...this.findings.values()], states });
      this.pendingStates = [];
      this.findings.clear();
      this.storageFailing = false;
      this.opts.logger.info('storage recovered');
    } catch (err) {
      this.pendingStates = states;
      this.opts.onStorageError?.(err);
      this.scheduleRetry();
    }
  }

  /** Storage failed: retry the commit in a second, while new batches are refused (503). */
  private scheduleRetry(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.retry();
    }, STORAGE_RETRY_MS);
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

function mergeStates(a: SessionStateChange[], b: SessionStateChange[]): SessionStateChange[] {
  if (a.length === 0) return b;
  const byKey = new Map<string, SessionStateChange>();
  for (const s of a) byKey.set(s.key, s);
  for (const s of b) byKey.set(s.key, s);
  return [...byKey.values()];
}
