import type { LineageResume } from '../../model/lineage.js';

/** A stretch with no traffic that ended in a resume: the broken stream (partition) before it. */
export interface Gap {
  fromMs: number;
  toMs: number;
  /** The resume that ended it. */
  resume: LineageResume;
}

/** Shortest silence drawn as a gap, as a share of the whole view. */
const MIN_GAP_SHARE = 0.03;

/**
 * For each resume, the silence before it: from the last event or request seen on any lane to
 * the resume. Lanes are compared on one axis, so emitters' clock skew shifts the gap's start by
 * that skew; the span ids in the hover titles say which side each time comes from.
 */
export function partitionGaps(
  events: ReadonlyArray<{ event: { timeMs: number } }>,
  resumes: ReadonlyArray<{ resume: LineageResume }>,
  requests: ReadonlyArray<{ fromMs: number }>,
): Gap[] {
  const traffic = [...events.map((e) => e.event.timeMs), ...requests.map((r) => r.fromMs)].sort((a, b) => a - b);
  const all = [...traffic, ...resumes.map((r) => r.resume.timeMs)];
  if (all.length === 0) return [];
  const span = Math.max(...all) - Math.min(...all);
  const gaps: Gap[] = [];
  for (const { resume } of [...resumes].sort((a, b) => a.resume.timeMs - b.resume.timeMs)) {
    const before = lastBefore(traffic, resume.timeMs);
    if (before === undefined) continue;
    const prev = gaps[gaps.length - 1];
    // Two resumes after one silence (client and server span of the same resume) are one gap.
    if (prev !== undefined && before <= prev.toMs) continue;
    if (resume.timeMs - before > Math.max(1, span * MIN_GAP_SHARE)) gaps.push({ fromMs: before, toMs: resume.timeMs, resume });
  }
  return gaps;
}

function lastBefore(sorted: readonly number[], t: number): number | undefined {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 ? sorted[lo - 1] : undefined;
}
