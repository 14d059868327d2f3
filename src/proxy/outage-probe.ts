import { forks, judgeEvent, type Continuity } from './guard-rules.js';
import { payloadPrint } from './payload-print.js';
import type { ProxyContext } from './proxy-context.js';
import { probeSession } from './resume-probe.js';
import type { ProxySession } from './session-table.js';

/** How the answer that followed the outage reached the session (what its new life is recorded as created by). */
export interface OutageCause {
  /** JSON-RPC method of the request (`notifications/cancelled`), or the HTTP method. */
  createdBy: string;
  method: string;
  protocolVersion: string | undefined;
  /** When that request arrived, epoch ms. */
  at: number;
}

/**
 * Under `--guard`: a session whose requests could not reach the upstream (it refused connections:
 * the server was down, and may have come back as a new process) now has a `2xx` answer that
 * carries no event to judge (a notification's `202`, a JSON answer). A rehydrating server rebuilds
 * the session on whatever request reaches it first, often the client's cancel of the call the
 * outage left hanging, and then sends nothing: that new life would go unseen. The upstream is asked
 * for one event of the session (a `ping`, resume-probe.ts) and it is judged against the log: a log
 * begun again records the new life (`session.created`, created by the request that reached it:
 * `minted_on_resume`) and the session is lost to the client (`404` from then on); a `404` to the
 * probe ends the session (`not_found_upstream`). An event new to the proxy cannot be judged (ids
 * without order): nothing is said, as for an empty replay (docs/proxy.md).
 */
export function probeAfterOutage(ctx: ProxyContext, s: ProxySession, path: string, cause: OutageCause): void {
  s.upstreamDown = false;
  const { opts } = ctx;
  const probe = probeSession(ctx.agent, opts.upstreamUrl, path, s.id, cause.protocolVersion, opts.maxEventChars, opts.guardHoldMs).then((a) => {
    if (ctx.table.get(s.id) !== s || s.lost) return;
    if (a.kind === 'gone') {
      ctx.spans.ended(s, 'not_found_upstream');
      ctx.history.moment(s, false);
      ctx.table.delete(s.id);
      return;
    }
    if (a.kind !== 'event') return;
    const c: Continuity = judgeEvent(s.log, a.ev.id!, payloadPrint(a.ev.data), undefined);
    if (!forks(c)) return;
    s.lost = true;
    if (c !== 'restarts') return;
    ctx.table.reincarnate(s);
    ctx.spans.created(s, { createdBy: cause.createdBy, clientSupplied: true, method: cause.method, protocolVersion: cause.protocolVersion }, cause.at);
    ctx.history.moment(s, true);
  });
  ctx.probes.add(probe);
  void probe.finally(() => ctx.probes.delete(probe));
}
