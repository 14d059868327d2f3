import type { EventFact, RequestFact } from '../session-state.js';

/** Evidence text of the settle that resolved an orphan (the live resolution path cites the same words). */
export function settledShows(requestId: string, outcome: string | undefined): string {
  if (outcome === 'answered' || outcome === 'error') return `client finally received the answer to request ${requestId} (${outcome})`;
  return `client settled request ${requestId} without an answer (${outcome ?? 'unknown'})`;
}

/** "the tools/call (long_job) result for request 3", "a notifications/progress notification", … */
export function describeEvent(e: EventFact, requests: Map<string, RequestFact>): string {
  if ((e.jsonrpcKind === 'response' || e.jsonrpcKind === 'error') && e.jsonrpcId !== undefined) {
    const r = requests.get(e.jsonrpcId);
    const m = r?.method !== undefined ? `${r.method}${r.tool !== undefined ? ` (${r.tool})` : ''} ` : '';
    return `the ${m}${e.jsonrpcKind === 'error' ? 'error' : 'result'} for request ${e.jsonrpcId}`;
  }
  if (e.jsonrpcKind === 'notification') {
    return `a ${e.method ?? 'notification'}${e.progressToken !== undefined ? ` for progressToken ${e.progressToken}` : ''}`;
  }
  if (e.jsonrpcKind === 'request') return `a server request ${e.method ?? ''}`.trimEnd();
  return `event ${e.eventId}`;
}
