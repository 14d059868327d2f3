import type { Finding } from '../../src/model/finding.js';
import type { FleetAppResult } from './fleet-mix.js';

/** Findings against the forks injected: ground truth is the server's own account (it rehydrated a reaped id). */
export interface FleetScore {
  /** Seed runs where the server rehydrated the session: the forks that happened. */
  forks: number;
  /** Of them, those with at least one finding on the run's services. */
  found: number;
  /** Forks that happened without a finding (service prefix of each). */
  missed: string[];
  /** Findings on no forked run's services (bulk traffic, the proxy, healthy stream breaks). */
  falseFindings: Finding[];
  /** Seed runs meant as a fork in which the server did not rehydrate (no fork to find), and breaks that forked. */
  offPlan: string[];
  /** Findings by kind, on forked runs. */
  kinds: Record<string, number>;
}

export function scoreFleet(app: FleetAppResult, findings: readonly Finding[]): FleetScore {
  const forked = app.seedRuns.filter((r) => r.forked);
  const on = (service: string, f: Finding): boolean => f.service.startsWith(`${service}-`);
  const missed = forked.filter((r) => !findings.some((f) => on(r.service, f))).map((r) => r.service);
  const kinds: Record<string, number> = {};
  for (const f of findings) if (forked.some((r) => on(r.service, f))) kinds[f.kind] = (kinds[f.kind] ?? 0) + 1;
  return {
    forks: forked.length,
    found: forked.length - missed.length,
    missed,
    falseFindings: findings.filter((f) => !forked.some((r) => on(r.service, f))),
    offPlan: app.seedRuns.filter((r) => (r.injected === 'fork') !== r.forked).map((r) => `${r.service}: ${r.forked ? 'forked' : 'did not fork'}`),
    kinds,
  };
}
