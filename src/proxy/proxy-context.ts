import type http from 'node:http';
import type { ServerResponse } from 'node:http';
import { JSONRPC_SESSION_NOT_FOUND, writeJsonRpcError } from './building-blocks.js';
import type { Deadlines } from './deadlines.js';
import type { EventHistory } from './event-history.js';
import type { PendingRequests } from './pending-requests.js';
import type { ResolvedProxyOptions } from './proxy-options.js';
import type { ProxyStats } from './proxy-stats.js';
import type { SessionTable } from './session-table.js';
import type { WireSpans } from './wire-spans.js';

/** What every exchange shares: one per proxy. */
export interface ProxyContext {
  opts: ResolvedProxyOptions;
  agent: http.Agent;
  table: SessionTable;
  spans: WireSpans;
  stats: ProxyStats;
  requests: PendingRequests;
  history: EventHistory;
  /** Every exchange's timeouts (connect, status line, stream idle, guard hold), under one loop timer. */
  deadlines: Deadlines;
  /** Stateless exchanges so far: the scope of their requests' ids. */
  exchanges: number;
  /** Probes made after an answer went out (outage-probe.ts): a close waits for them, each bounded by `--guard-hold-ms`. */
  probes: Set<Promise<void>>;
}

/** JSON-RPC code of the proxy's own 502/504 answers (the upstream, not the request, failed). */
export const JSONRPC_UPSTREAM_ERROR = -32603;

export type GuardRule = 'resumeForked' | 'answerForked' | 'sessionReissued' | 'sessionLost';

/** Answers 404 / -32001 in the upstream's stead, as an SDK transport does for an unknown session. */
export function refuse(ctx: ProxyContext, res: ServerResponse, rule: GuardRule): void {
  ctx.stats.guardRefusals[rule]++;
  writeJsonRpcError(res, 404, JSONRPC_SESSION_NOT_FOUND, 'Session not found', { reason: `forkwatch proxy: ${rule}` });
}
