import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LineageEvent, SessionLineage } from '../../../src/model/lineage.js';
import { MAX_TICKS_PER_LANE } from '../../../src/ui/timeline/event-bins.js';
import { placeLabels } from '../../../src/ui/timeline/label-rows.js';
import { renderTimeline } from '../../../src/ui/timeline/render-timeline.js';
import { buildTimelineModel } from '../../../src/ui/timeline/timeline-model.js';

const T0 = 1_800_000_000_000;

function big(n: number): SessionLineage {
  const events: LineageEvent[] = [];
  for (let i = 0; i < n; i++) {
    const side = i % 2 === 0 ? 'server' : 'client';
    const seq = Math.floor(i / 2) + 1;
    events.push({ traceId: 'ab'.repeat(16), spanId: i.toString(16).padStart(16, '0'), side, timeMs: T0 + i * 10, eventId: `ev-${seq}`, seq, incarnation: 'A' });
  }
  // One dropped event deep inside, and a regression near the end: both must stay visible.
  events[2001] = { ...events[2001]!, delivery: 'dropped' };
  events[4001] = { ...events[4001]!, seq: 3 };
  return {
    sessionKey: 'k'.repeat(32), service: 'svc', incarnations: [{ incarnation: 'A', source: 'observed', createdBy: 'initialize', created: { traceId: 'ab'.repeat(16), spanId: 'f'.repeat(16), side: 'server', timeMs: T0 }, eventCount: n / 2 }],
    events, resumes: [], requests: [], findingIds: [], lastActivityMs: T0 + n * 10,
  };
}

test('thousands of events: bins instead of ticks, bounded markup, the dropped and regressed events still drawn', () => {
  const svg = renderTimeline(buildTimelineModel(big(6000), [])).value;
  const ticks = (svg.match(/<g class="tick /g) ?? []).length;
  const bins = (svg.match(/<rect class="bin"/g) ?? []).length;
  assert.ok(ticks <= 2 * 10, `a few ticks per lane (${ticks})`);
  assert.ok(bins > 50 && bins <= 2 * 200, `bins per lane at most the plot width over the bin width (${bins})`);
  assert.match(svg, /<g class="tick [^"]*dropped/);
  assert.match(svg, /<g class="tick [^"]*regressed/);
  // The counts add up: every event is in a tick or a bin.
  const binned = [...svg.matchAll(/<rect class="bin"[^>]*><title>events: (\d+)/g)].reduce((s, m) => s + Number(m[1]), 0);
  assert.equal(binned + ticks, 6000);
  assert.ok(svg.length < 400_000, `markup stays small (${svg.length} chars)`);
});

test('thousands of dropped events: binned in red, the markup still bounded', () => {
  const l = big(6000);
  l.events = l.events.map((e) => (e.side === 'client' ? { ...e, delivery: 'dropped' } : e));
  const svg = renderTimeline(buildTimelineModel(l, [])).value;
  assert.ok((svg.match(/<rect class="bin dropped"/g) ?? []).length > 50);
  assert.ok((svg.match(/<g class="tick /g) ?? []).length <= 20);
  assert.ok(svg.length < 400_000, `${svg.length} chars`);
});

test('few events: one tick each, labelled with id and seq while there is room', () => {
  const svg = renderTimeline(buildTimelineModel(big(40), [])).value;
  assert.equal((svg.match(/<g class="tick /g) ?? []).length, 40);
  assert.ok(40 <= MAX_TICKS_PER_LANE * 2);
  assert.match(svg, /<text class="tick-label"[^>]*>ev-1 #1<\/text>/);
  assert.match(svg, /<title>SSE event: ev-1\nseq: 1\nincarnation: A\nside: server/);
});

test('labels take the first free row and give up rather than overprint', () => {
  assert.deepEqual(placeLabels([{ x: 0, width: 50 }, { x: 10, width: 50 }, { x: 20, width: 50 }, { x: 100, width: 10 }], 2), [0, 1, -1, 0]);
});

test('the client and server spans of one resume share a label: the forked verdict wins', () => {
  const l = big(40);
  const at = l.events[39]!.timeMs + 400;
  const ref = (side: 'client' | 'server', n: string) => ({ traceId: 'ab'.repeat(16), spanId: n.repeat(16), side, timeMs: at });
  l.resumes = [
    { ...ref('client', 'c'), lastEventId: 'ev-20', status: 200, outcome: 'resumed' },
    { ...ref('server', 'd'), lastEventId: 'ev-20', status: 200, outcome: 'forked' },
  ];
  const svg = renderTimeline(buildTimelineModel(l, [])).value;
  const labels = [...svg.matchAll(/<text class="resume-label"[^>]*>([^<]*)</g)].map((m) => m[1]);
  assert.deepEqual(labels, ['resume Last-Event-ID ev-20 → 200 forked']);
  assert.equal((svg.match(/<g class="resume/g) ?? []).length, 2, 'both resumes are drawn');
});
