import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Finding } from '../../../src/model/finding.js';
import type { LineageEvent, SessionLineage } from '../../../src/model/lineage.js';
import { laneKeyOf, orderLanes } from '../../../src/ui/timeline/lanes.js';
import { buildTimelineModel } from '../../../src/ui/timeline/timeline-model.js';

const T0 = 1_800_000_000_000;
const ref = (n: number, side: string, timeMs: number, extra: Record<string, unknown> = {}): { traceId: string; spanId: string; side: 'client'; timeMs: number } =>
  ({ traceId: 'ab'.repeat(16), spanId: n.toString(16).padStart(16, '0'), side: side as 'client', timeMs, ...extra });

function ev(n: number, side: string, at: number, eventId: string, seq: number, over: Partial<LineageEvent> = {}): LineageEvent {
  return { ...ref(n, side, T0 + at), eventId, seq, incarnation: over.incarnation ?? 'A', ...over };
}

function lineage(over: Partial<SessionLineage> = {}): SessionLineage {
  return { sessionKey: 'k'.repeat(32), service: 'svc', incarnations: [], events: [], resumes: [], requests: [], findingIds: [], lastActivityMs: T0, ...over };
}

test('lanes: client, proxy, server, then any other side or observer in a lane of its own', () => {
  assert.equal(laneKeyOf({ side: 'server', observer: 'proxy' }), 'proxy');
  assert.equal(laneKeyOf({ side: 'server', observer: 'server' }), 'server');
  assert.equal(laneKeyOf({ side: 'gateway' }), 'gateway');
  assert.equal(laneKeyOf({ side: '' }), 'unknown');
  assert.deepEqual(orderLanes(['server', 'zeta', 'client', 'proxy', 'alpha', 'server']).map((l) => l.key), ['client', 'proxy', 'server', 'alpha', 'zeta']);
  const m = buildTimelineModel(
    lineage({
      events: [ev(1, 'client', 0, 'e1', 1), ev(2, 'server', 1, 'e1', 1), { ...ev(3, 'server', 2, 'e1', 1), observer: 'proxy' } as LineageEvent, ev(4, 'observer-x', 3, 'e1', 1)],
    }),
    [],
  );
  assert.deepEqual(m.lanes.map((l) => l.key), ['client', 'proxy', 'server', 'observer-x']);
  assert.equal(m.events.filter((e) => e.lane === 'proxy').length, 1);
});

test('a session seen through a proxy: server evidence (which names only its side) is marked in the proxy lane', () => {
  const l = lineage({ events: [ev(1, 'client', 0, 'e1', 1), { ...ev(2, 'server', 1, 'e1', 1), observer: 'proxy' } as LineageEvent] });
  const f = { id: 'f1', kind: 'minted_on_resume', evidence: [{ ...ref(2, 'server', T0 + 1), spanName: 'forkwatch.sse.event', shows: 'x' }] } as unknown as Finding;
  const m = buildTimelineModel(l, [f]);
  assert.deepEqual(m.lanes.map((x) => x.key), ['client', 'proxy']);
  assert.deepEqual(m.marks.map((x) => x.lane), ['proxy']);
  // Without an observer in the lineage, server evidence stays in the server lane.
  assert.deepEqual(buildTimelineModel(lineage({ events: [ev(2, 'server', 1, 'e1', 1)] }), [f]).marks.map((x) => x.lane), ['server']);
});

test('the seed fork: the minted band, the regressed and dropped events, the gap before the resume, the orphaned call', () => {
  const l = lineage({
    incarnations: [
      { incarnation: 'A', source: 'observed', createdBy: 'initialize', created: ref(10, 'server', T0), ended: { ...ref(11, 'server', T0 + 500), reason: 'reaped_idle' }, eventCount: 3 },
      { incarnation: 'B', source: 'observed', createdBy: 'GET', created: ref(12, 'server', T0 + 900), eventCount: 1 },
    ],
    events: [
      ev(1, 'server', 10, 'e1', 1),
      ev(2, 'client', 11, 'e1', 1),
      ev(3, 'server', 20, 'e2', 2),
      ev(4, 'client', 21, 'e2', 2),
      ev(5, 'server', 910, 'e1', 1, { incarnation: 'B' }),
      ev(6, 'client', 912, 'e1', 1, { incarnation: 'B', delivery: 'dropped' }),
      ev(7, 'client', 914, 'e2', 2, { incarnation: 'B', delivery: 'dropped' }),
    ],
    resumes: [{ ...ref(20, 'server', T0 + 900), lastEventId: 'e2', status: 200, outcome: 'forked', incarnation: 'B' }],
    requests: [{ requestId: '1', method: 'tools/call', tool: 'slow', progressToken: '1', incarnation: 'A', sent: ref(30, 'client', T0 + 5), settled: ref(31, 'client', T0 + 1500), state: 'settled', outcome: 'timeout' }],
  });
  const orphan: Finding = {
    id: 'f'.repeat(16), kind: 'orphaned_progress_token', service: 'svc', sessionKey: l.sessionKey, incarnation: 'A', requestId: '1', progressToken: '1',
    summary: 'orphaned', evidence: [{ ...ref(30, 'client', T0 + 5), spanName: 'forkwatch.request.sent', shows: 'sent' }], firstSeenMs: T0, detectedAtMs: T0 + 2000,
  };
  const m = buildTimelineModel(l, [orphan]);
  const minted = m.bands.filter((b) => b.minted);
  assert.deepEqual(minted.map((b) => [b.lane, b.incarnation, b.createdBy]), [['server', 'B', 'GET']]);
  assert.equal(m.bands.find((b) => b.lane === 'server' && b.incarnation === 'A')?.endedReason, 'reaped_idle');
  const regressed = m.events.filter((e) => e.regressed).map((e) => [e.lane, e.event.spanId]);
  // The first event of each lane below its seen maximum, once per regression.
  assert.deepEqual(regressed, [['server', (5).toString(16).padStart(16, '0')], ['client', (6).toString(16).padStart(16, '0')]]);
  assert.equal(m.events.filter((e) => e.dropped).length, 2);
  assert.equal(m.gaps.length, 1);
  assert.equal(m.gaps[0]!.fromMs, T0 + 21);
  assert.equal(m.gaps[0]!.toMs, T0 + 900);
  assert.equal(m.requests.length, 1);
  assert.equal(m.requests[0]!.orphaned, true, 'named by an orphan finding though a timeout settled it since');
  assert.equal(m.requests[0]!.toMs, T0 + 1500);
  assert.deepEqual(m.marks.map((x) => [x.lane, x.finding.kind]), [['client', 'orphaned_progress_token']]);
  assert.equal(m.t0, T0);
  assert.equal(m.t1, T0 + 1500);
});

test('a healthy resume has no mint, no regression and no orphan; a stored lineage without times draws nothing and says so', () => {
  const m = buildTimelineModel(
    lineage({
      incarnations: [{ incarnation: 'A', source: 'observed', createdBy: 'initialize', created: ref(1, 'server', T0), eventCount: 3 }],
      events: [ev(2, 'server', 10, 'e1', 1), ev(3, 'server', 20, 'e2', 2), ev(4, 'server', 700, 'e3', 3)],
      resumes: [{ ...ref(5, 'server', T0 + 690), lastEventId: 'e2', status: 200, outcome: 'resumed' }],
    }),
    [],
  );
  assert.equal(m.bands.some((b) => b.minted), false);
  assert.equal(m.events.some((e) => e.regressed || e.dropped), false);
  assert.equal(m.requests.length, 0);
  const stored = buildTimelineModel(lineage({ incarnations: [{ incarnation: 'A', source: 'finding', eventCount: 0 }], requests: [{ requestId: '1', state: 'orphaned' }] }), []);
  assert.equal(stored.undrawn, 1);
  assert.equal(stored.events.length, 0);
});
