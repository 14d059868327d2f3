import type { FleetAppResult } from './fleet-mix.js';
import type { FleetResult } from './run-fleet.js';

const callsOf = (a: FleetAppResult): number => a.bulkCalls + a.bulkFailed + a.seedRuns.reduce((n, r) => n + r.calls, 0);
const ms = (s: number): string => `${(s * 1000).toFixed(0).padStart(7)} ms`;

/** The lines `npm run bench -- fleet` prints: per 1,000 tool calls, each part's share, and the findings. */
export function fleetTable(r: FleetResult): string[] {
  const instrCalls = callsOf(r.instrumented);
  const plainCalls = callsOf(r.plain);
  const proxied = r.plain.bulkCalls + r.plain.bulkFailed;
  const fleet = instrCalls + proxied;
  const per = (cpu: number, calls: number): string => ms((cpu / calls) * 1000);
  const spans = r.spans.detectors[0] + r.spans.detectors[1];
  const appSpans = r.instrumented.spans ?? { bulk: 0, seed: 0, byName: {} };
  const proxySpans = spans - appSpans.bulk - appSpans.seed;
  const k = (n: number, calls: number): string => ((n / calls) * 1000).toFixed(0);
  const s = r.score;
  const i = r.instrumented;
  return [
    `# fleet: ${fleet.toLocaleString('en-US')} tool calls = ${instrCalls} instrumented-app calls (${i.bulkCalls + i.bulkFailed} bulk, ${i.longCalls} long with progress, ${i.bulkFailed} failed; ${i.seedRuns.length} seed runs: ${i.seedRuns.filter((x) => x.injected === 'break').length} stream breaks, ${i.seedRuns.filter((x) => x.injected === 'fork').length} forks, ${i.seedRuns.reduce((n, x) => n + x.calls, 0)} calls)`,
    `#        + ${proxied} calls through \`forkwatch proxy\` (plain app, ${r.plain.longCalls} long, ${r.plain.bulkFailed} failed); ${i.sessions + r.plain.sessions} bulk sessions`,
    `# load ${r.wall.load.toFixed(1)} s, until the findings settled ${r.wall.total.toFixed(1)} s; CPU from /proc/<pid>/stat over those windows`,
    '',
    'per 1,000 tool calls                              value       of',
    `  forkwatch spans exported (detectors received) ${((spans / fleet) * 1000).toFixed(0).padStart(10)}       all fleet calls (${spans} spans; Collector accepted ${r.spans.collectorAccepted}; detectors ${r.spans.detectors[0]} + ${r.spans.detectors[1]})`,
    `    from the instrumented app              ${k(appSpans.bulk + appSpans.seed, instrCalls).padStart(10)}       instrumented-app calls (bulk traffic ${k(appSpans.bulk, i.bulkCalls + i.bulkFailed)} per 1,000 bulk calls; seed runs ${appSpans.seed} spans)`,
    `    from the proxy (received - the app's)  ${k(proxySpans, proxied).padStart(10)}       proxied calls`,
    `    by name (instrumented app): ${Object.entries(appSpans.byName).sort((a, b) => b[1] - a[1]).map(([n, c]) => `${n.replace(/^forkwatch\./, '')} ${c}`).join(', ')}`,
    `  instrumentation CPU (instrumented - plain app)  ${per(r.cpu.instrumented - r.cpu.plain, instrCalls)}       instrumented-app calls (app CPU ${per(r.cpu.instrumented, instrCalls)} instrumented, ${per(r.cpu.plain, plainCalls)} plain: +${(((r.cpu.instrumented - r.cpu.plain) / r.cpu.plain) * 100).toFixed(0)} %)`,
    `  sidecar CPU (forkwatch proxy process)         ${per(r.cpu.proxy, proxied)}       proxied calls (idle rate over the window would be ${per(r.idleCpu.proxy, proxied)})`,
    `  Collector CPU (gateway, load_balancing)       ${per(r.cpu.collector, fleet)}       all fleet calls (idle: ${per(r.idleCpu.collector, fleet)})`,
    `  detector CPU (2 replicas together)            ${per(r.cpu.detectors[0] + r.cpu.detectors[1], fleet)}       all fleet calls (idle: ${per(r.idleCpu.detectors, fleet)}; ${r.cpu.detectors.map((c) => `${(c * 1000).toFixed(0)} ms`).join(' + ')} in all)`,
    '',
    `findings: forks found ${s.found}/${s.forks} (${Object.entries(s.kinds).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}); false findings ${s.falseFindings.length} (${s.falseFindings.filter((f) => f.resolvedAtMs === undefined).length} unresolved); on the replicas ${r.findings[0].length} + ${r.findings[1].length}`,
    ...s.missed.map((m) => `  MISSED fork ${m}`),
    ...s.falseFindings.map((f) => `  FALSE ${f.kind} on ${f.service} session ${f.sessionKey.slice(0, 12)}${f.resolvedAtMs !== undefined ? ` (resolved ${Math.round(f.resolvedAtMs - f.detectedAtMs)} ms after it was raised)` : ''}: ${f.summary.slice(0, 200)}`),
    ...s.offPlan.map((m) => `  off plan (labelled by the server's account, not by the plan): ${m}`),
  ];
}
