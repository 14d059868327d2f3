import type { Lane } from './lanes.js';

/** Drawing width; the SVG scales to the page through its viewBox. */
export const WIDTH = 1200;
/** Left gutter for lane names. */
export const PLOT_X0 = 100;
/** Right end of the plot; the rest holds labels of orphaned requests' ends. */
export const PLOT_X1 = WIDTH - 24;
/** Header rows above the lanes: partition gaps and resumes are labelled there. */
export const HEADER_H = 48;
export const LANE_H = 160;
/** Axis below the lanes. */
export const AXIS_H = 44;

/** Vertical positions inside one lane, from its top. */
export const IN_LANE = {
  flagTop: 4,
  flagH: 16,
  /** Baselines of the tick-label rows. */
  labelRows: [34, 46, 58] as const,
  bandTop: 64,
  bandH: 44,
  tickTop: 68,
  // Ticks stop above the band's label row (baseline bandTop + bandH - 4): they never run through its text.
  tickBottom: 92,
  /** Request bars take these rows (y of the bar; its label sits 13 below). */
  requestRows: [118, 140] as const,
} as const;

/** Top y of each lane by key. */
export function laneTops(lanes: readonly Lane[]): Map<string, number> {
  return new Map(lanes.map((l, i) => [l.key, HEADER_H + i * LANE_H]));
}

/** Full drawing height for `lanes` lanes. */
export function drawingHeight(laneCount: number): number {
  return HEADER_H + laneCount * LANE_H + AXIS_H;
}
