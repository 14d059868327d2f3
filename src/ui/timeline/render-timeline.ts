import { html, type SafeHtml } from '../html.js';
import { renderAxis } from './render-axis.js';
import { renderBand, renderLaneEvents, renderLaneFrame } from './render-lanes.js';
import { renderFindingMarks, renderGap, renderRequests, renderResumes } from './render-marks.js';
import { timeScale } from './time-scale.js';
import { HEADER_H, LANE_H, PLOT_X0, PLOT_X1, WIDTH, drawingHeight, laneTops } from './timeline-layout.js';
import type { TimelineModel } from './timeline-model.js';

/** Margin added on both sides of the time range, as a share of it. */
const PAD_SHARE = 0.02;

/**
 * The session timeline as an inline SVG: lanes per side, incarnation bands, SSE event ticks (or
 * bins), the silence before each resume, resumes, requests and finding flags (the `current`
 * finding's outlined), each with a hover title. Self-contained markup with classes only (the stylesheet colours it), so it renders
 * without JavaScript and under a CSP without 'unsafe-inline'.
 */
export function renderTimeline(model: TimelineModel, current?: string): SafeHtml {
  const pad = Math.max(1, (model.t1 - model.t0) * PAD_SHARE);
  const scale = timeScale(model.t0 - pad, model.t1 + pad, PLOT_X0 + 4, PLOT_X1 - 4);
  const tops = laneTops(model.lanes);
  const bottom = HEADER_H + model.lanes.length * LANE_H;
  const height = drawingHeight(model.lanes.length);
  const lanes = model.lanes.map((lane) => {
    const top = tops.get(lane.key)!;
    return html`<g class="lane-content">${model.bands.filter((b) => b.lane === lane.key).map((b) => renderBand(b, top, scale))}${renderLaneEvents(
      model.events.filter((e) => e.lane === lane.key),
      top,
      scale,
    )}</g>`;
  });
  return html`<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="timeline-title">
<title id="timeline-title">Timeline of session ${model.sessionKey}: ${model.lanes.map((l) => l.label).join(', ')} lanes, ${model.events.length} events, ${model.resumes.length} resumes, ${model.marks.length} findings</title>
<defs><pattern id="minted-hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect class="hatch-bg" width="8" height="8"/><line class="hatch" x1="0" y1="0" x2="0" y2="8"/></pattern></defs>
${model.lanes.map((l) => renderLaneFrame(l, tops.get(l.key)!))}
${renderAxis(scale, HEADER_H, bottom)}
${model.gaps.map((g) => renderGap(g, bottom, scale))}
${lanes}
${renderRequests(model.requests, tops, scale)}
${renderResumes(model.resumes, tops, bottom, scale)}
${renderFindingMarks(model.marks, tops, scale, current)}
</svg>`;
}
