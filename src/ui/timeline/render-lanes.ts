import { html, type SafeHtml } from '../html.js';
import { formatAbsolute, formatOffset } from '../format-time.js';
import type { Lane } from './lanes.js';
import { binLaneEvents, type EventBin } from './event-bins.js';
import { CHAR_WIDTH, placeLabels, shorten, shortenId, titleLines } from './label-rows.js';
import type { TimeScale } from './time-scale.js';
import { IN_LANE, LANE_H, PLOT_X0, PLOT_X1 } from './timeline-layout.js';
import type { Band, TimelineEvent } from './timeline-model.js';

/** Longest tick label, in characters (`eventId #seq`). */
const MAX_TICK_LABEL = 18;
/** Distinct incarnation colours (CSS classes inc-0..inc-5). */
export const INC_COLOURS = 6;

/** Lane background and name. */
export function renderLaneFrame(lane: Lane, top: number): SafeHtml {
  return html`<g class="lane"><rect class="lane-bg" x="${PLOT_X0}" y="${top}" width="${PLOT_X1 - PLOT_X0}" height="${LANE_H - 4}"/>
<text class="lane-name" x="8" y="${top + IN_LANE.bandTop + 26}">${lane.label}<title>lane: ${lane.key}</title></text></g>`;
}

/** An incarnation band: its colour, whether it was minted (hatched), its name and how it ended. */
export function renderBand(b: Band, top: number, scale: TimeScale): SafeHtml {
  const x = scale.x(b.fromMs);
  const w = Math.max(3, scale.x(b.toMs) - x);
  const y = top + IN_LANE.bandTop;
  const cls = `band inc-${b.index % INC_COLOURS}${b.minted ? ' minted' : ''}${b.openStart ? ' open-start' : ''}`;
  const title = titleLines({
    incarnation: b.incarnation,
    'created by': b.createdBy,
    minted: b.minted ? 'yes: created by something other than initialize (the fork)' : undefined,
    ended: b.endedReason,
    from: `${formatAbsolute(b.fromMs)} (${formatOffset(b.fromMs - scale.t0)})`,
    to: `${formatAbsolute(b.toMs)} (${formatOffset(b.toMs - scale.t0)})`,
  });
  const name = `inc ${shorten(b.incarnation, 10)}${b.minted ? ` MINTED by ${shorten(b.createdBy ?? '?', 24)}` : ''}`;
  const label = w > name.length * CHAR_WIDTH || b.minted ? html`<text class="band-label${b.minted ? ' minted' : ''}" x="${(x + 3).toFixed(1)}" y="${y + IN_LANE.bandH - 4}">${name}</text>` : '';
  const end = b.endedReason !== undefined
    ? html`<line class="band-end" x1="${(x + w).toFixed(1)}" y1="${y}" x2="${(x + w).toFixed(1)}" y2="${y + IN_LANE.bandH}"/><text class="band-end-label" x="${(x + w - 2).toFixed(1)}" y="${y + 10}" text-anchor="end">${shorten(b.endedReason, 14)}</text>`
    : '';
  return html`<g class="${cls}"><title>${title}</title><rect x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${IN_LANE.bandH}"/>${label}${end}</g>`;
}

/** A lane's SSE events: ticks (labelled where there is room) and, past the tick limit, bins. */
export function renderLaneEvents(events: readonly TimelineEvent[], top: number, scale: TimeScale): SafeHtml {
  const { ticks, bins } = binLaneEvents(events, scale.x);
  const labels = ticks.map((t) => tickLabel(t));
  const rows = placeLabels(ticks.map((t, i) => ({ x: scale.x(t.event.timeMs) - 2, width: labels[i]!.length * CHAR_WIDTH })), IN_LANE.labelRows.length);
  const maxCount = bins.reduce((m, b) => Math.max(m, b.count), 1);
  return html`<g class="events">${bins.map((b) => renderBin(b, top, maxCount, scale))}${ticks.map((t, i) => renderTick(t, labels[i]!, rows[i]!, top, scale))}</g>`;
}

function tickLabel(t: TimelineEvent): string {
  const e = t.event;
  const seq = typeof e.seq === 'number' ? ` #${e.seq}` : '';
  return `${shortenId(e.eventId, MAX_TICK_LABEL - seq.length)}${seq}`;
}

function renderTick(t: TimelineEvent, label: string, row: number, top: number, scale: TimeScale): SafeHtml {
  const e = t.event;
  const x = scale.x(e.timeMs).toFixed(1);
  const cls = ['tick', t.incIndex !== undefined ? `inc-${t.incIndex % INC_COLOURS}` : 'inc-none'];
  if (t.dropped) cls.push('dropped');
  if (e.replayed === true) cls.push('replayed');
  if (t.regressed) cls.push('regressed');
  if (t.cited) cls.push('cited');
  const title = titleLines({
    'SSE event': e.eventId,
    seq: e.seq,
    incarnation: e.incarnation,
    side: e.side,
    'JSON-RPC': [e.jsonrpcKind, e.jsonrpcId].filter((v) => v !== undefined).join(' ') || undefined,
    delivery: e.delivery,
    replayed: e.replayed,
    'seq regression': t.regressed ? 'below a seq this side had already seen' : undefined,
    digest: e.digest,
    time: `${formatAbsolute(e.timeMs)} (${formatOffset(e.timeMs - scale.t0)})`,
    trace: e.traceId,
    span: e.spanId,
  });
  const y1 = top + IN_LANE.tickTop;
  const y2 = top + IN_LANE.tickBottom;
  const text = row >= 0 ? html`<text class="tick-label" x="${x}" y="${top + IN_LANE.labelRows[row]!}">${label}</text>` : '';
  const drop = t.dropped ? html`<path class="drop-x" d="M${x} ${y1} m-4 -4 l8 8 m0 -8 l-8 8"/>` : '';
  const regress = t.regressed ? html`<path class="regress-mark" d="M${x} ${y2 + 1} l-5 -8 h10 z"/>` : '';
  return html`<g class="${cls.join(' ')}"><title>${title}</title><line x1="${x}" y1="${y1}" x2="${x}" y2="${y2}"/>${drop}${regress}${text}</g>`;
}

function renderBin(b: EventBin, top: number, maxCount: number, scale: TimeScale): SafeHtml {
  const h = Math.max(2, ((IN_LANE.tickBottom - IN_LANE.tickTop) * Math.log1p(b.count)) / Math.log1p(maxCount));
  const title = titleLines({
    events: b.count,
    'dropped by dedup': b.dropped > 0 ? b.dropped : undefined,
    seq: b.minSeq === undefined ? undefined : b.minSeq === b.maxSeq ? b.minSeq : `${b.minSeq}..${b.maxSeq}`,
    'first id': b.firstId,
    'last id': b.lastId,
    from: `${formatAbsolute(b.fromMs)} (${formatOffset(b.fromMs - scale.t0)})`,
    to: `${formatAbsolute(b.toMs)} (${formatOffset(b.toMs - scale.t0)})`,
  });
  return html`<rect class="bin${b.dropped > 0 ? ' dropped' : ''}" x="${b.x}" y="${(top + IN_LANE.tickBottom - h).toFixed(1)}" width="5" height="${h.toFixed(1)}"><title>${title}</title></rect>`;
}
