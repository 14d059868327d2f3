import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { FORK_KINDS, REQUEST_ANOMALY_KINDS, RESUME_OUTCOMES } from '../model/finding.js';

/**
 * Buckets of `forkwatch_detection_lag_seconds`: sub-second ingest up to the 120 s a resume can take
 * to show. A finding is made one decision window (default 10 s) after its evidence arrived, so the
 * bounds are close just past 10 s, where a default detector's lags fall, and past 2.5 s (the
 * sessions bench's window + 250 ms): with 10 and 20 s as neighbours, a p99 of 10.4 s and one of
 * 19 s read alike.
 */
export const DETECTION_LAG_BUCKETS_SECONDS = [0.1, 0.25, 0.5, 1, 2.5, 3, 4, 5, 7.5, 10, 10.5, 11, 12.5, 15, 20, 30, 60, 120];

/** What the detector found: forks, orphaned progress tokens, resumes, live sessions, lag. */
export interface FindingFamilies {
  forks: Counter<'kind' | 'service'>;
  /** Stateless transport: orphaned requests, duplicate executions, work after cancel. */
  requestAnomalies: Counter<'kind' | 'service'>;
  orphanedTotal: Counter<'service'>;
  orphanedNow: Gauge<'service'>;
  resumes: Counter<'outcome' | 'service'>;
  sessionsActive: Gauge<'service'>;
  detectionLag: Histogram<string>;
  /** Creates every series of `service` at 0, so `increase()` sees the first increment. */
  zeroInit(service: string): void;
}

/**
 * `collectStats` runs when a stats-fed gauge is scraped and refreshes it (and its siblings) from
 * the engine's stats.
 */
export function createFindingFamilies(registry: Registry, collectStats: () => void): FindingFamilies {
  const registers = [registry];
  const collect = (): void => collectStats();
  const forks = new Counter({
    name: 'forkwatch_forks_total',
    help: 'Session forks detected, by fork kind and server service.',
    labelNames: ['kind', 'service'] as const,
    enableExemplars: true,
    registers: [],
  });
  const requestAnomalies = new Counter({
    name: 'forkwatch_request_anomalies_total',
    help: 'Stateless transport (no session id) request anomalies: orphaned_request, duplicate_execution, work_after_cancel, by server service.',
    labelNames: ['kind', 'service'] as const,
    enableExemplars: true,
    registers: [],
  });
  const orphanedTotal = new Counter({
    name: 'forkwatch_progress_tokens_orphaned_total',
    help: 'Progress tokens orphaned: the request can no longer be answered on its session.',
    labelNames: ['service'] as const,
    enableExemplars: true,
    registers: [],
  });
  const orphanedNow = new Gauge({
    name: 'forkwatch_orphaned_progress_tokens',
    help: 'Orphaned progress tokens not yet settled, now.',
    labelNames: ['service'] as const,
    registers,
    collect,
  });
  const resumes = new Counter({
    name: 'forkwatch_resumes_total',
    help: 'Resumes (requests carrying Last-Event-ID), by outcome and server service.',
    labelNames: ['outcome', 'service'] as const,
    enableExemplars: true,
    registers: [],
  });
  const sessionsActive = new Gauge({
    name: 'forkwatch_sessions_active',
    help: 'Sessions with a live incarnation, by server service.',
    labelNames: ['service'] as const,
    registers,
    collect,
  });
  const detectionLag = new Histogram({
    name: 'forkwatch_detection_lag_seconds',
    help: 'Time from the first evidence span of a finding reaching the detector to the finding being made, seconds.',
    buckets: DETECTION_LAG_BUCKETS_SECONDS,
    registers,
  });
  // prom-client refuses exemplar-enabled metrics on a Prometheus-format registry at
  // construction; registering afterwards is allowed, and renderMetrics picks the format per scrape.
  for (const m of [forks, requestAnomalies, orphanedTotal, resumes]) registry.registerMetric(m);
  return {
    forks,
    requestAnomalies,
    orphanedTotal,
    orphanedNow,
    resumes,
    sessionsActive,
    detectionLag,
    zeroInit(service) {
      for (const kind of FORK_KINDS) forks.inc({ labels: { kind, service }, value: 0 });
      for (const kind of REQUEST_ANOMALY_KINDS) requestAnomalies.inc({ labels: { kind, service }, value: 0 });
      for (const outcome of RESUME_OUTCOMES) resumes.inc({ labels: { outcome, service }, value: 0 });
      orphanedTotal.inc({ labels: { service }, value: 0 });
    },
  };
}
