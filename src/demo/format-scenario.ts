import type { ScenarioResult } from './types.js';

/**
 * A short human summary of a seed scenario run (what the `forkwatch demo` command prints under
 * each run): what the server did with the resume, what was lost, what hung, what the guards raised.
 */
export function formatScenarioResult(r: ScenarioResult): string[] {
  const out: string[] = [];
  out.push(`${r.server} server + ${r.client} client${r.healthy ? ' (healthy resume)' : ''}: ${r.wallMs} ms`);
  for (const x of r.resumes) out.push(`  resume with Last-Event-ID ${x.lastEventId} answered ${x.status}`);
  if (r.sessions.rehydrated > 0) out.push(`  FORK: the server rehydrated the session id ${r.sessions.rehydrated} time(s) instead of answering 404`);
  if (r.sequenceRegressions.length > 0) {
    const first = r.sequenceRegressions[0]!;
    out.push(`  event sequence went backwards on the same session id (${first.fromEventId} -> ${first.toEventId})`);
  }
  if (r.droppedByDedup.length > 0) {
    out.push(`  the app's (session id, event id) dedup dropped ${r.droppedByDedup.length} event(s): ${r.droppedByDedup.map((d) => `${d.eventId}/${d.kind}`).join(' ')}`);
  }
  const onWire = r.lostResults.filter((l) => l.onWire);
  out.push(
    `  tool results: ${r.resultsProduced} produced by the server, ${r.resultsReceived} received by the app` +
      (onWire.length > 0 ? `, ${onWire.length} lost after reaching the client` : ''),
  );
  for (const h of r.hung) out.push(`  call ${h.attempt} hung ${h.durationMs} ms (until its timeout)`);
  for (const f of r.forks) out.push(`  client guard raised SessionForkError ${f.kind} at ${f.atMs} ms`);
  if (r.sessions.reinitializedByClient > 0) out.push(`  the client re-initialized ${r.sessions.reinitializedByClient} time(s)`);
  for (const c of r.calls) if (c.outcome === 'error') out.push(`  call ${c.attempt} failed in ${c.durationMs} ms: ${c.error?.name}${c.error?.code !== undefined ? ` ${c.error.code}` : ''}`);
  return out;
}
