import { Counter, Gauge, type Registry } from 'prom-client';
import type { DropReason } from '../correlate/types.js';

/** The `reason` values of `forkwatch_correlation_dropped_total`, zero-initialised. */
export const DROP_REASONS: readonly DropReason[] = [
  'session_capacity',
  'event_capacity',
  'events_per_session',
  'requests_per_session',
  'session_expired',
];

/** The detector's own health: engine sizes, drops, storage, readiness, build. */
export interface HealthFamilies {
  dropped: Counter<'reason'>;
  trackedSessions: Gauge<string>;
  trackedEvents: Gauge<string>;
  pendingRequests: Gauge<string>;
  storageErrors: Counter<string>;
  buildInfo: Gauge<'version'>;
  ready: Gauge<string>;
}

/** `collectStats`: as for createFindingFamilies. */
export function createHealthFamilies(registry: Registry, collectStats: () => void): HealthFamilies {
  const registers = [registry];
  const collect = (): void => collectStats();
  const dropped = new Counter({
    name: 'forkwatch_correlation_dropped_total',
    help: 'Data the correlator let go of before deciding on it, by reason.',
    labelNames: ['reason'] as const,
    registers,
  });
  for (const reason of DROP_REASONS) dropped.inc({ reason }, 0);
  return {
    dropped,
    trackedSessions: new Gauge({
      name: 'forkwatch_tracked_sessions',
      help: 'Sessions the correlator holds in memory.',
      registers,
      collect,
    }),
    trackedEvents: new Gauge({
      name: 'forkwatch_tracked_events',
      help: 'SSE events the correlator holds in memory.',
      registers,
      collect,
    }),
    pendingRequests: new Gauge({
      name: 'forkwatch_pending_requests',
      help: 'Client requests the correlator is waiting to see settle.',
      registers,
      collect,
    }),
    storageErrors: new Counter({
      name: 'forkwatch_storage_errors_total',
      help: 'Failed SQLite writes (each is retried).',
      registers,
    }),
    buildInfo: new Gauge({
      name: 'forkwatch_build_info',
      help: 'Always 1; the version label says which forkwatch build runs.',
      labelNames: ['version'] as const,
      registers,
    }),
    ready: new Gauge({
      name: 'forkwatch_ready',
      help: '1 when the detector is ready to ingest and store, else 0.',
      registers,
    }),
  };
}
