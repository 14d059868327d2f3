import { html, type SafeHtml } from '../html.js';
import { formatAbsolute, formatDuration, formatOffset } from '../format-time.js';
import { uiFindingPath } from '../ui-paths.js';
import type { LineageResume } from '../../model/lineage.js';
import { CHAR_WIDTH, placeLabels, shorten, shortenId, titleLines } from './label-rows.js';
import type { Gap } from './partition-gaps.js';
import type { TimeScale } from './time-scale.js';
import { HEADER_H, IN_LANE, PLOT_X0, PLOT_X1, WIDTH } from './timeline-layout.js';
import type { FindingMark, RequestBar } from './timeline-model.js';

const FLAG: Record<string, string> = {
  minted_on_resume: 'MINT',
  incarnation_changed: 'NEW INCARNATION',
  sequence_regression: 'SEQ REGRESSION',
  replay_gap: 'REPLAY GAP',
  dedup_loss: 'DEDUP LOSS',
  orphaned_progress_token: 'ORPHANED',
};

/** Flags are bold: a little wider per character than the plain labels. */
const FLAG_CHAR_WIDTH = CHAR_WIDTH + 1;

/** Resume labels are 11 units and bold. */
const RESUME_CHAR_WIDTH = CHAR_WIDTH + 1.2;

const at = (scale: TimeScale, ms: number): string => `${formatAbsolute(ms)} (${formatOffset(ms - scale.t0)})`;

/** The silence before a resume, shaded across every lane and labelled in the header. */
export function renderGap(g: Gap, bottom: number, scale: TimeScale): SafeHtml {
  const x = scale.x(g.fromMs);
  const w = Math.max(2, scale.x(g.toMs) - x);
  const title = titleLines({ 'no traffic': formatDuration(g.toMs - g.fromMs), from: at(scale, g.fromMs), to: at(scale, g.toMs), 'ended by': `resume from ${g.resume.lastEventId}` });
  return html`<g class="gap"><title>${title}</title><rect x="${x.toFixed(1)}" y="4" width="${w.toFixed(1)}" height="${bottom - 4}"/><text class="gap-label" x="${(x + w / 2).toFixed(1)}" y="16" text-anchor="middle">stream broken: no traffic ${formatDuration(g.toMs - g.fromMs)}</text></g>`;
}

function resumeText(r: LineageResume): string {
  const status = r.status === undefined ? 'no answer seen' : String(r.status);
  return `resume Last-Event-ID ${shortenId(r.lastEventId, 18)} → ${status}${r.outcome ? ` ${r.outcome}` : ''}`;
}

const isBad = (r: LineageResume): boolean => r.outcome === 'forked' || r.outcome === 'rejected_other';

/** Resumes: a line across the lanes at the resume, a diamond on its lane, its cursor and answer on top. */
export function renderResumes(resumes: ReadonlyArray<{ lane: string; resume: LineageResume }>, tops: Map<string, number>, bottom: number, scale: TimeScale): SafeHtml {
  const texts = resumes.map((r) => resumeText(r.resume));
  // Centred on the resume, but kept inside the drawing near either edge.
  const centres = resumes.map((r, i) => {
    const half = (texts[i]!.length * RESUME_CHAR_WIDTH) / 2;
    return Math.min(Math.max(scale.x(r.resume.timeMs), PLOT_X0 + half), WIDTH - 2 - half);
  });
  // One row of labels: a forked or wrongly rejected resume claims its place first, so when the
  // client's and the server's span of one resume overlap, the label shows the server's verdict.
  const spans = resumes.map((_, i) => ({ from: centres[i]! - (texts[i]!.length * RESUME_CHAR_WIDTH) / 2, to: centres[i]! + (texts[i]!.length * RESUME_CHAR_WIDTH) / 2 }));
  const order = resumes.map((_, i) => i).sort((a, b) => Number(isBad(resumes[b]!.resume)) - Number(isBad(resumes[a]!.resume)) || spans[a]!.from - spans[b]!.from);
  const rows = new Array<number>(resumes.length).fill(-1);
  const placed: Array<{ from: number; to: number }> = [];
  for (const i of order) {
    if (placed.some((p) => spans[i]!.from < p.to + 4 && spans[i]!.to + 4 > p.from)) continue;
    placed.push(spans[i]!);
    rows[i] = 0;
  }
  return html`${resumes.map(({ lane, resume: r }, i) => {
    const x = scale.x(r.timeMs).toFixed(1);
    const y = (tops.get(lane) ?? HEADER_H) + IN_LANE.bandTop + IN_LANE.bandH / 2;
    const bad = isBad(r);
    const title = titleLines({
      resume: r.lastEventId,
      'answered status': r.status,
      outcome: r.outcome,
      incarnation: r.incarnation,
      'previous incarnation': r.previousIncarnation,
      side: r.side,
      time: at(scale, r.timeMs),
      trace: r.traceId,
      span: r.spanId,
    });
    const label = rows[i]! >= 0 ? html`<text class="resume-label" x="${centres[i]!.toFixed(1)}" y="36" text-anchor="middle">${texts[i]!}</text>` : '';
    return html`<g class="resume${bad ? ' bad' : ''}"><title>${title}</title><line x1="${x}" y1="40" x2="${x}" y2="${bottom}"/><path d="M${x} ${y - 7} l7 7 l-7 7 l-7 -7 z"/>${label}</g>`;
  })}`;
}

/** Longest request label, in characters. */
const MAX_REQUEST_LABEL = 96;

/**
 * Requests: a bar from sent to settled, in rows so overlapping calls stay apart. Orphaned ones are
 * red and dashed, up to their settle (a timeout) or to the end of the view.
 */
export function renderRequests(bars: readonly RequestBar[], tops: Map<string, number>, scale: TimeScale): SafeHtml {
  const texts = bars.map((b) => requestText(b));
  const spans = bars.map((b, i) => {
    const x0 = scale.x(b.fromMs);
    const x1 = b.toMs === undefined ? PLOT_X1 : Math.max(x0 + 2, scale.x(b.toMs));
    return { x0, x1, width: Math.max(x1 - x0, texts[i]!.length * CHAR_WIDTH) };
  });
  const rows = new Array<number>(bars.length).fill(-1);
  const byLane = new Map<string, number[]>();
  bars.forEach((b, i) => byLane.set(b.lane, [...(byLane.get(b.lane) ?? []), i]));
  for (const idx of byLane.values()) {
    const placed = placeLabels(idx.map((i) => ({ x: spans[i]!.x0, width: spans[i]!.width })), IN_LANE.requestRows.length, 8);
    idx.forEach((i, k) => (rows[i] = placed[k]!));
  }
  return html`${bars.map((b, i) => {
    const r = b.request;
    const top = tops.get(b.lane) ?? HEADER_H;
    const { x0, x1 } = spans[i]!;
    const open = b.toMs === undefined;
    // Out of rows: the bar goes on the last row unlabelled (its title still says everything).
    const row = rows[i]! >= 0 ? rows[i]! : IN_LANE.requestRows.length - 1;
    const y = top + IN_LANE.requestRows[row]!;
    const title = titleLines({
      request: r.requestId,
      method: r.method,
      tool: r.tool,
      'progress token': r.progressToken,
      incarnation: r.incarnation,
      state: r.state,
      orphaned: b.orphaned ? 'yes: the session forked or ended while it was pending' : undefined,
      outcome: r.outcome,
      sent: at(scale, b.fromMs),
      settled: b.toMs === undefined ? undefined : at(scale, b.toMs),
      trace: r.sent?.traceId,
      span: r.sent?.spanId,
    });
    const cls = b.orphaned ? 'orphaned' : open ? 'open' : 'settled';
    const label = rows[i]! >= 0 ? html`<text class="request-label" x="${(x0 + 2).toFixed(1)}" y="${y + 13}">${texts[i]!}</text>` : '';
    return html`<g class="request ${cls}"><title>${title}</title><line x1="${x0.toFixed(1)}" y1="${y}" x2="${x1.toFixed(1)}" y2="${y}"/><path d="M${x0.toFixed(1)} ${y - 5} v10"/>${
      open ? html`<path d="M${x1.toFixed(1)} ${y} l-6 -4 v8 z"/>` : html`<path d="M${x1.toFixed(1)} ${y - 5} v10"/>`
    }${label}</g>`;
  })}`;
}

function requestText(b: RequestBar): string {
  const r = b.request;
  const name = `${r.method ?? 'request'}${r.tool !== undefined ? ` ${r.tool}` : ''} #${r.requestId}`;
  const state = b.orphaned
    ? `ORPHANED: never answered${b.toMs !== undefined ? `, ${r.outcome ?? 'settled'} after ${formatDuration(b.toMs - b.fromMs)}` : ''}`
    : r.state === 'settled' && b.toMs !== undefined ? `${r.outcome ?? 'settled'} after ${formatDuration(b.toMs - b.fromMs)}` : r.state;
  return shorten(`→ ${name}${r.progressToken !== undefined ? ` token ${r.progressToken}` : ''} · ${state}`, MAX_REQUEST_LABEL);
}

/** Findings: a flag where their last evidence is, linking to the finding's page. */
export function renderFindingMarks(marks: readonly FindingMark[], tops: Map<string, number>, scale: TimeScale, current?: string): SafeHtml {
  const texts = marks.map((m) => FLAG[m.finding.kind] ?? shorten(m.finding.kind.toUpperCase(), 16));
  const byLane = new Map<string, number[]>();
  marks.forEach((m, i) => byLane.set(m.lane, [...(byLane.get(m.lane) ?? []), i]));
  // Flags of one lane share a row: later ones slide right rather than overprint.
  const xs = new Array<number>(marks.length);
  for (const idx of byLane.values()) {
    let end = -Infinity;
    idx.sort((a, b) => marks[a]!.timeMs - marks[b]!.timeMs);
    for (const i of idx) {
      xs[i] = Math.max(scale.x(marks[i]!.timeMs), end + 4);
      end = xs[i]! + texts[i]!.length * FLAG_CHAR_WIDTH + 8;
    }
    // Flags pushed past the plot's right end slide back left together, keeping their order: past
    // it they overhang the lane and, with the outline of the current one, the drawing's edge.
    const over = end - (PLOT_X1 - 2);
    if (over > 0) for (const i of idx) xs[i] = Math.max(PLOT_X0, xs[i]! - over);
  }
  return html`${marks.map((m, i) => {
    const top = (tops.get(m.lane) ?? HEADER_H) + IN_LANE.flagTop;
    const x = xs[i]!;
    const w = texts[i]!.length * FLAG_CHAR_WIDTH + 8;
    const pole = scale.x(m.timeMs);
    const title = titleLines({ finding: m.finding.id, kind: m.finding.kind, summary: m.finding.summary, at: at(scale, m.timeMs) });
    return html`<a href="${uiFindingPath(m.finding.id)}" class="flag kind-${m.finding.kind.replace(/[^a-z_]/g, '')}${m.finding.id === current ? ' current' : ''}"><title>${title}</title><line x1="${pole.toFixed(1)}" y1="${top}" x2="${pole.toFixed(1)}" y2="${top + IN_LANE.tickBottom - IN_LANE.flagTop}"/><rect x="${x.toFixed(1)}" y="${top}" width="${w}" height="${IN_LANE.flagH}" rx="2"/><text x="${(x + 4).toFixed(1)}" y="${top + 12}">${texts[i]!}</text></a>`;
  })}`;
}
