import { html, type SafeHtml } from '../html.js';
import { formatAbsolute, formatOffset } from '../format-time.js';
import { axisTicks, type TimeScale } from './time-scale.js';
import { PLOT_X0, PLOT_X1 } from './timeline-layout.js';

/**
 * Vertical grid lines at round offsets, labelled relative to the first span (`+1.5 s`), with the
 * absolute UTC times of both ends under the axis.
 */
export function renderAxis(scale: TimeScale, top: number, bottom: number): SafeHtml {
  const ticks = axisTicks(scale).map((o) => {
    const x = scale.x(scale.t0 + o).toFixed(1);
    return html`<line class="grid" x1="${x}" y1="${top}" x2="${x}" y2="${bottom}"/><text class="axis" x="${x}" y="${bottom + 14}" text-anchor="middle">${formatOffset(o)}<title>${formatAbsolute(scale.t0 + o)}</title></text>`;
  });
  return html`<g class="axis">${ticks}
<line class="axis-line" x1="${PLOT_X0}" y1="${bottom}" x2="${PLOT_X1}" y2="${bottom}"/>
<text class="axis abs" x="${PLOT_X0}" y="${bottom + 32}">${formatAbsolute(scale.t0)}</text>
<text class="axis abs" x="${PLOT_X1}" y="${bottom + 32}" text-anchor="end">${formatAbsolute(scale.t1)}</text></g>`;
}
