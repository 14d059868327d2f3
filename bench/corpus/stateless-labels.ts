import type { Labels } from './wire-labels.js';
import type { StatelessRun } from './stateless-scenario.js';

/**
 * Labels a stateless run (no session, no resume) from what happened, never from forkwatch's
 * spans: the client's wire tap (every message it POSTed and received), the app's outcome of each
 * call, and the server's own account of each run of its tool (stateless-servers.ts).
 *
 * - `orphaned_request`: a call whose POST was accepted (a 2xx stream), whose answer never reached
 *   the client's wire, that the app neither got answered nor cancelled (it waited to its timeout,
 *   or its client failed it on the broken stream), and that no later call with the same arguments
 *   got answered (a re-issue).
 * - `work_after_cancel`: the server kept working and sending after the call was given up: by its
 *   own account a run's handler sent after its response stream closed, or the wire shows
 *   messages of a call the app cancelled arriving after the client sent its `notifications/cancelled`
 *   (SDK 1.x: the cancel POST reaches another per-request server; the first runs on).
 * - `duplicate_execution`: by the server's account two runs of the same arguments completed, the
 *   first after its response stream had closed, and the app had re-issued the call.
 */
export function labelStateless(s: StatelessRun): Labels {
  const labels: Labels = new Map();
  const sent = s.wire.filter((m) => m.dir === 'sent' && m.info.kind === 'request' && m.info.method === 'tools/call');
  // The app's calls are sequential: its n-th call is the n-th tools/call on the wire.
  const wireOf = (attempt: number) => sent[attempt - 1];
  const answered = (id: string | undefined): boolean =>
    id !== undefined && s.wire.some((m) => m.dir === 'received' && (m.info.kind === 'response' || m.info.kind === 'error') && m.info.id === id);

  const orphans: string[] = [];
  for (const c of s.calls) {
    if (c.outcome === 'result' || c.outcome === 'cancelled') continue;
    const w = wireOf(c.attempt);
    if (w === undefined || answered(w.info.id)) continue;
    const accepted = s.wire.some((m) => m.exchange === w.exchange && m.dir === 'received');
    if (!accepted) continue;
    if (s.calls.some((r) => r.attempt > c.attempt && r.outcome === 'result')) continue;
    orphans.push(`call ${c.attempt} (request ${w.info.id}) ${c.outcome}`);
  }
  if (orphans.length > 0) labels.set('orphaned_request', `${orphans.join(', ')}: its answer never reached the client and no re-issue got one`);

  const after = s.serverRuns.filter((r) => r.sentAfterClose > 0);
  if (after.length > 0) {
    const n = (f: (r: (typeof after)[number]) => number): string => after.map(f).join('+');
    labels.set('work_after_cancel', `the handler sent ${n((r) => r.sentAfterClose)} notification(s) after its response stream closed (${n((r) => r.acceptedAfterClose)} accepted by the SDK; its own account)`);
  }
  for (const c of s.calls.filter((x) => x.outcome === 'cancelled')) {
    const w = wireOf(c.attempt);
    const cancel = s.wire.find((m) => m.dir === 'sent' && m.info.method === 'notifications/cancelled' && m.at >= c.startedAtMs);
    if (w === undefined || cancel === undefined) continue;
    const late = s.wire.filter(
      (m) => m.dir === 'received' && m.at > cancel.at && m.exchange === w.exchange && (m.info.id === w.info.id || (w.info.progressToken !== undefined && m.info.progressToken === w.info.progressToken)),
    );
    if (late.length > 0 && !labels.has('work_after_cancel')) labels.set('work_after_cancel', `${late.length} message(s) of cancelled call ${c.attempt} arrived after the client's notifications/cancelled (the wire)`);
  }

  const byTopic = new Map<string, typeof s.serverRuns>();
  for (const r of s.serverRuns) byTopic.set(r.topic, [...(byTopic.get(r.topic) ?? []), r]);
  for (const [topic, runs] of byTopic) {
    const done = runs.filter((r) => r.completedAtMs !== undefined);
    if (s.calls.length > 1 && done.length > 1 && done[0]!.closedAtMs !== undefined) {
      labels.set('duplicate_execution', `the server completed ${topic} ${done.length} times, the first after its stream closed (its own account)`);
    }
  }
  return labels;
}
