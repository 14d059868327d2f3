import { ORPHANED_PROGRESS_TOKEN } from '../model/finding.js';
import { rememberClientEvent } from './record-span.js';
import type { CompactSession, SessionState } from './session-state.js';

/**
 * The summary a decided idle session is reduced to: client baselines, the last
 * `maxIncarnationsPerSession` known incarnations, emitted findings (only unresolved orphans keep
 * their finding), and the requests still waiting for an answer with a progress token.
 * Mutates `s` (its client events are folded into its baseline): the caller drops it after.
 */
export function compactSession(s: SessionState, maxIncarnationsPerSession: number): CompactSession {
  const clientEvents = s.events.filter((e) => e.side === 'client').sort((a, b) => a.timeMs - b.timeMs);
  for (const e of clientEvents) rememberClientEvent(s, e);
  const known: Record<string, string> = { ...s.knownIncarnations };
  for (const c of s.created) known[c.inc] = c.createdBy;
  const incs = Object.keys(known);
  for (const inc of incs.slice(0, Math.max(0, incs.length - maxIncarnationsPerSession))) delete known[inc];
  for (const e of Object.values(s.emitted)) if (e.kind !== ORPHANED_PROGRESS_TOKEN || e.resolvedAtMs !== undefined) delete e.finding;
  const c: CompactSession = {
    key: s.key,
    compact: true,
    stateless: s.stateless,
    lastActivityMs: s.lastActivityMs,
    live: isLive(s),
    knownIncarnations: known,
    emitted: s.emitted,
  };
  if (s.serverService !== undefined) c.serverService = s.serverService;
  if (s.clientService !== undefined) c.clientService = s.clientService;
  if (s.clientBaseline !== undefined) c.clientBaseline = s.clientBaseline;
  const answered = new Set<string>();
  for (const e of s.events) {
    if (e.side === 'server' && (e.jsonrpcKind === 'response' || e.jsonrpcKind === 'error') && e.jsonrpcId !== undefined) answered.add(e.jsonrpcId);
  }
  const waiting = [...s.requests.values()].filter(
    (r) => r.settled === undefined && r.progressToken !== undefined && !answered.has(r.requestId),
  );
  if (waiting.length > 0) c.requests = waiting;
  return c;
}

/** Requests of `s` not settled yet. */
export function unsettledRequests(s: SessionState): number {
  let n = 0;
  for (const r of s.requests.values()) if (r.settled === undefined) n++;
  return n;
}

/**
 * A session with a created incarnation not yet ended; without a created span seen, live unless
 * the server reported an end. Cheap on purpose: stats() runs it for every session on each scrape.
 */
export function isLive(s: SessionState): boolean {
  if (s.stateless) return false;
  if (s.created.length > 0) return s.created.some((c) => !s.ended.some((e) => e.inc === c.inc));
  return s.ended.length === 0;
}
