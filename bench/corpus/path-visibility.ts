import type { FindingKind } from '../../src/model/finding.js';
import type { CorpusCell } from './corpus-cell.js';
import type { CellRun } from './run-cell.js';

/**
 * Whether the cell's instrumented parts can see a kind at all, as docs/telemetry.md and
 * docs/proxy.md state it: a label of a kind out of sight is reported apart, not as a miss (a false
 * finding of it still counts). The server side (in-process instrumentation or `forkwatch proxy`)
 * is always there; the client side only for instrumented and guarded clients.
 * - `incarnation_changed`, `sequence_regression`: client spans of the key (the proxy reports a
 *   regressing replay as `minted_on_resume`, docs/proxy.md).
 * - `dedup_loss`: a client `sse.event` with `delivery=dropped`.
 * - `orphaned_progress_token`: a client `request.sent`, or the proxy's own spans of the request.
 * - `minted_on_resume`, `replay_gap`: the server side.
 * - `orphaned_request`: the server side's `request.handled stream_closed=true` (in-process or the
 *   proxy), or an instrumented 2.x client's `stream_broken`; not the stock client's on SDK 2.x
 *   stateless (2026-07-28: its close is the cancel, a cut and an abort are the same bytes there).
 * - `work_after_cancel`, `duplicate_execution`: the SDK 2.x stateless server instrumentation only
 *   (the 1.x SDK drops a closed transport's sends before forkwatch sees them; the proxy cannot see
 *   a handler, docs/proxy.md).
 */
export function pathSees(cell: CorpusCell, kind: FindingKind): boolean {
  const client = cell.client !== 'stock';
  const proxy = cell.path.via !== 'in-process';
  switch (kind) {
    case 'incarnation_changed':
    case 'sequence_regression':
    case 'dedup_loss':
      return client;
    case 'orphaned_progress_token':
      return client || proxy;
    case 'orphaned_request':
      return !(cell.path.stateless === true && !proxy && cell.path.sdk === '2.x' && !client);
    case 'work_after_cancel':
    case 'duplicate_execution':
      return cell.path.stateless === true && !proxy && cell.path.sdk === '2.x';
    default:
      return true;
  }
}

/**
 * {@link pathSees} for one run: also out of sight, the `minted_on_resume` of a rehydrated session
 * behind the plain proxy when, on the wire, no event with an id crossed after the session's first
 * `2xx` from its new server: the first resume answered `2xx` (a server restarted gracefully mid-call
 * whose successor rebuilt the session and then sent nothing), or, with no such resume, the first
 * `2xx` exchange after the server restarted (refused reconnects: the successor rebuilt the session
 * on the client's cancel, a notification answered `202`). The plain proxy reads a mint from event
 * ids and has none to read (docs/proxy.md). Reported as unseen, not a pass.
 */
export function runSees(run: CellRun, kind: FindingKind): boolean {
  if (!pathSees(run.cell, kind)) return false;
  if (kind !== 'minted_on_resume' || run.cell.path.via !== 'proxy' || run.stateless !== undefined) return true;
  const { exchanges, events } = run.r.wire;
  const ok = (s: number): boolean => s >= 200 && s < 300;
  const restartedAt = run.r.steps.find((s) => s.what === 'server restarted')?.atMs;
  const resume = exchanges.find((x) => x.lastEventId !== undefined && ok(x.status));
  const first = resume ?? (restartedAt !== undefined ? exchanges.find((x) => x.at >= restartedAt && ok(x.status)) : undefined);
  if (first === undefined) return true;
  return events.some((e) => e.at >= first.at);
}
