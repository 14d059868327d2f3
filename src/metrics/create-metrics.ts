import { readFileSync } from 'node:fs';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { DropReason, EngineListener, EngineStats, FindingInfo } from '../correlate/types.js';
import { FORK_KINDS, ORPHANED_PROGRESS_TOKEN, REQUEST_ANOMALY_KINDS, RESUME_OUTCOMES, type Finding, type ResumeOutcome } from '../model/finding.js';
import { createFindingFamilies } from './finding-families.js';
import { createHealthFamilies } from './health-families.js';
import { REJECT_REASONS, createIngestFamilies, type RejectReason } from './ingest-families.js';
import { renderMetrics, type RenderedMetrics } from './render-metrics.js';
import { DEFAULT_MAX_SERVICES, ServiceLabeler } from './service-labeler.js';

export interface CreateMetricsOptions {
  /** Registry to register on; default a new one (never prom-client's global registry). */
  registry?: Registry;
  /** Distinct `service` label values before the rest become `other`; default 50. */
  maxServices?: number;
  /** `version` label of `forkwatch_build_info`; default this package's version. */
  version?: string;
  /** Clock for `forkwatch_last_span_received_timestamp_seconds`, epoch ms; default `Date.now`. */
  now?: () => number;
  /**
   * Also register prom-client's process and Node.js families (`process_cpu_seconds_total`,
   * `process_resident_memory_bytes`, `nodejs_heap_size_used_bytes`, `nodejs_eventloop_lag_*`,
   * `nodejs_gc_duration_seconds`, ...), read at scrape time: what sizing a replica needs (spans per
   * CPU-second, memory) on the operator's own machines. Default false; `serve` turns it on.
   */
  processMetrics?: boolean;
}

/** One answered OTLP export request, as the receiver reports it. */
export interface OtlpRequestReport {
  /** HTTP status answered. */
  status: number;
  /** Why spans (or the whole request) were refused, when they were. */
  reason?: RejectReason;
  /** Spans in the request when it was accepted (forkwatch or not); 0 when it was refused whole. */
  spans: number;
  /** Accepted spans that were not forkwatch spans. */
  foreign: number;
  /** Spans refused (partial success, or the whole request when it could be decoded). */
  rejected: number;
}

/**
 * The detector's Prometheus metrics. Every method is safe to call from hot paths: none throws.
 * It is an EngineListener, so it can subscribe to the engine directly.
 */
export interface DetectorMetrics extends EngineListener {
  readonly registry: Registry;
  /**
   * Counts a finding in `forks_total` or `progress_tokens_orphaned_total` when `isNew`, with the
   * first evidence span's trace id as exemplar, and observes `info.lagMs` (ms) in the lag histogram.
   */
  onFinding(finding: Finding, isNew: boolean, info?: FindingInfo): void;
  onResume(outcome: ResumeOutcome, service: string, traceId: string): void;
  onDrop(reason: DropReason, count: number): void;
  onOtlpRequest(report: OtlpRequestReport): void;
  setQueueSpans(n: number): void;
  storageError(): void;
  setReady(ready: boolean): void;
  /**
   * A server service was seen: its fork and resume series are created at 0 now, so that the
   * first fork is an increase() an alert rule can see. Bounded like every service label.
   */
  noteService(service: string): void;
  /** Feeds the engine-size and per-service gauges; `stats` is called at scrape time. */
  bindStats(stats: () => EngineStats): void;
  /** Renders the registry for a scrape with this `Accept` header (OpenMetrics when asked). */
  render(accept?: string): Promise<RenderedMetrics>;
}

const TRACE_ID = /^[0-9a-f]{32}$/;

/** Creates and registers every forkwatch metric family; see docs for names and labels. */
export function createMetrics(options: CreateMetricsOptions = {}): DetectorMetrics {
  const registry = options.registry ?? new Registry();
  const now = options.now ?? Date.now;
  let statsFn: (() => EngineStats) | undefined;
  let statsCache: EngineStats | undefined;

  const findings = createFindingFamilies(registry, () => refreshStats());
  const ingest = createIngestFamilies(registry);
  const health = createHealthFamilies(registry, () => refreshStats());
  const labeler = new ServiceLabeler(options.maxServices ?? DEFAULT_MAX_SERVICES, (s) => findings.zeroInit(s));
  health.buildInfo.set({ version: options.version ?? packageVersion() }, 1);
  health.ready.set(0);
  // One event-loop delay monitor and one GC observer per call: the detector makes one registry.
  if (options.processMetrics === true) collectDefaultMetrics({ register: registry });

  // Each stats-fed gauge triggers this on scrape; one engine call serves the whole scrape
  // because prom-client reads every metric in the same synchronous pass.
  function refreshStats(): void {
    if (!statsFn || statsCache) return;
    try {
      statsCache = statsFn();
    } catch {
      return; // a broken stats source must not fail the scrape
    }
    queueMicrotask(() => (statsCache = undefined));
    const s = statsCache;
    health.trackedSessions.set(s.sessions);
    health.trackedEvents.set(s.events);
    health.pendingRequests.set(s.pendingRequests);
    setByService(findings.sessionsActive, s.activeSessionsByService);
    setByService(findings.orphanedNow, s.orphanedByService);
  }

  function setByService(g: typeof findings.sessionsActive, byService: Map<string, number>): void {
    const sums = new Map<string, number>();
    for (const [svc, n] of byService) {
      const l = labeler.label(svc);
      sums.set(l, (sums.get(l) ?? 0) + n);
    }
    // Known services with nothing now read 0 rather than vanish, so alerts resolve cleanly.
    for (const l of labeler.labels()) g.set({ service: l }, sums.get(l) ?? 0);
  }

  function exemplar(traceId: string | undefined): Record<string, string> | undefined {
    return traceId && TRACE_ID.test(traceId) ? { trace_id: traceId } : undefined;
  }

  return {
    registry,
    onFinding(f, isNew, info) {
      safely(() => {
        if (!isNew) return;
        const service = labeler.label(f.service);
        const lagMs = info?.lagMs;
        if (lagMs !== undefined && Number.isFinite(lagMs) && lagMs >= 0) findings.detectionLag.observe(lagMs / 1000);
        const ex = exemplar(f.evidence[0]?.traceId);
        // Unknown kinds and outcomes are dropped rather than minted as new label values.
        if (f.kind === ORPHANED_PROGRESS_TOKEN) {
          findings.orphanedTotal.inc({ labels: { service }, value: 1, ...(ex ? { exemplarLabels: ex } : {}) });
        } else if ((FORK_KINDS as readonly string[]).includes(f.kind)) {
          findings.forks.inc({ labels: { kind: f.kind, service }, value: 1, ...(ex ? { exemplarLabels: ex } : {}) });
        } else if ((REQUEST_ANOMALY_KINDS as readonly string[]).includes(f.kind)) {
          findings.requestAnomalies.inc({ labels: { kind: f.kind, service }, value: 1, ...(ex ? { exemplarLabels: ex } : {}) });
        }
      });
    },
    noteService(service) {
      safely(() => void labeler.label(service));
    },
    onResume(outcome, service, traceId) {
      safely(() => {
        if (!(RESUME_OUTCOMES as readonly string[]).includes(outcome)) return;
        const ex = exemplar(traceId);
        findings.resumes.inc({
          labels: { outcome, service: labeler.label(service) },
          value: 1,
          ...(ex ? { exemplarLabels: ex } : {}),
        });
      });
    },
    onDrop(reason, count) {
      safely(() => {
        if (count > 0) health.dropped.inc({ reason }, count);
      });
    },
    onOtlpRequest(r) {
      safely(() => {
        const code = Number.isInteger(r.status) && r.status >= 100 && r.status <= 599 ? String(r.status) : 'other';
        ingest.otlpRequests.inc({ code });
        if (r.spans > 0) {
          ingest.spansReceived.inc(r.spans);
          ingest.lastSpanReceived.set(now() / 1000);
        }
        if (r.foreign > 0) ingest.spansIgnored.inc(r.foreign);
        if (r.reason && (REJECT_REASONS as readonly string[]).includes(r.reason) && r.rejected > 0) {
          ingest.spansRejected.inc({ reason: r.reason }, r.rejected);
        }
      });
    },
    setQueueSpans(n) {
      safely(() => ingest.queueSpans.set(n));
    },
    storageError() {
      safely(() => health.storageErrors.inc());
    },
    setReady(ready) {
      safely(() => health.ready.set(ready ? 1 : 0));
    },
    bindStats(stats) {
      statsFn = stats;
    },
    render(accept) {
      return renderMetrics(registry, accept);
    },
  };
}

/** Metrics must never throw into the ingest path; a bad value is dropped. */
function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // deliberately ignored: see above
  }
}

function packageVersion(): string {
  try {
    // ../../package.json from both src/metrics and dist/metrics
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}
