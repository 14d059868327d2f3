import type { Finding } from '../../src/model/finding.js';
import type { SessionLineage } from '../../src/model/lineage.js';

/** Markup, quotes and a CDATA end: what a hostile client or server can put in any string it emits. */
export const HOSTILE = `<script>alert("x")</script>'"]]><img src=x onerror=alert(1)>`;
export const HOSTILE_KEY = 'f0'.repeat(16);
const T0 = Date.parse('2026-12-01T10:00:00Z');
const TRACE = 'ab'.repeat(16);
const span = (n: number): string => n.toString(16).padStart(16, '0');

/** A forked session whose tool name, event ids, incarnations, service and evidence are all hostile. */
export function hostileLineage(): SessionLineage {
  const incA = `incA${HOSTILE}`;
  const incB = `incB${HOSTILE}`;
  return {
    sessionKey: HOSTILE_KEY,
    service: `svc${HOSTILE}`,
    clientService: `client${HOSTILE}`,
    incarnations: [
      { incarnation: incA, source: 'server', createdBy: 'initialize', created: { traceId: TRACE, spanId: span(1), side: 'server', timeMs: T0 }, eventCount: 2, lastSeq: 2 },
      { incarnation: incB, source: 'server', createdBy: `GET${HOSTILE}`, created: { traceId: TRACE, spanId: span(2), side: 'server', timeMs: T0 + 900 }, eventCount: 1, lastSeq: 1 },
    ],
    events: [
      { traceId: TRACE, spanId: span(3), side: 'server', timeMs: T0 + 10, incarnation: incA, eventId: `e1${HOSTILE}`, seq: 1 },
      { traceId: TRACE, spanId: span(4), side: 'client', timeMs: T0 + 12, incarnation: incA, eventId: `e1${HOSTILE}`, seq: 1, delivery: 'delivered' },
      { traceId: TRACE, spanId: span(5), side: 'server', timeMs: T0 + 910, incarnation: incB, eventId: `e1${HOSTILE}`, seq: 1, jsonrpcKind: `result${HOSTILE}`, jsonrpcId: `7${HOSTILE}` },
      { traceId: TRACE, spanId: span(6), side: 'client', timeMs: T0 + 912, incarnation: incB, eventId: `e1${HOSTILE}`, seq: 1, delivery: 'dropped' },
    ],
    resumes: [{ traceId: TRACE, spanId: span(7), side: 'server', timeMs: T0 + 900, lastEventId: `e2${HOSTILE}`, status: 200, outcome: 'forked', incarnation: incB }],
    requests: [
      { requestId: `7${HOSTILE}`, method: 'tools/call', tool: `tool${HOSTILE}`, progressToken: `tok${HOSTILE}`, incarnation: incA, sent: { traceId: TRACE, spanId: span(8), side: 'client', timeMs: T0 + 5 }, state: 'orphaned' },
    ],
    findingIds: ['0123456789abcdef'],
    lastActivityMs: T0 + 912,
  };
}

export function hostileFinding(): Finding {
  return {
    id: '0123456789abcdef',
    kind: 'minted_on_resume',
    service: `svc${HOSTILE}`,
    sessionKey: HOSTILE_KEY,
    incarnation: `incA${HOSTILE}`,
    newIncarnation: `incB${HOSTILE}`,
    requestId: `7${HOSTILE}`,
    summary: `server minted ${HOSTILE} on tool${HOSTILE}`,
    evidence: [{ traceId: TRACE, spanId: span(2), side: 'server', timeMs: T0 + 900, spanName: `forkwatch.session.created${HOSTILE}`, shows: `created on ${HOSTILE}` }],
    firstSeenMs: T0 + 900,
    detectedAtMs: T0 + 2000,
  };
}
