/** Approximate advance of one character at the timeline's 10-unit font, in drawing units. */
export const CHAR_WIDTH = 6;

/**
 * Greedy placement of labels into `rows` text rows: each label (in x order) takes the first row
 * whose previous label ends before it starts; -1 when none has room (the label is left to the
 * hover title). Keeps dense timelines readable instead of overprinting.
 */
export function placeLabels(items: ReadonlyArray<{ x: number; width: number }>, rows: number, gap = 4): number[] {
  const ends = new Array<number>(rows).fill(-Infinity);
  const order = items.map((_, i) => i).sort((a, b) => items[a]!.x - items[b]!.x);
  const out = new Array<number>(items.length).fill(-1);
  for (const i of order) {
    const it = items[i]!;
    const row = ends.findIndex((end) => end + gap <= it.x);
    if (row < 0) continue;
    ends[row] = it.x + it.width;
    out[i] = row;
  }
  return out;
}

/** Cuts `s` to `max` characters with an ellipsis (the whole text belongs in a title). */
export function shorten(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, Math.max(1, max - 1))}…` : s;
}

/**
 * Cuts an id to `max` characters in the middle: ids of one session tend to share a prefix (a
 * stream id) and differ at the end (a counter), so the end is what tells them apart.
 */
export function shortenId(s: string, max: number): string {
  if (s.length <= max) return s;
  const head = Math.max(1, Math.floor((max - 1) / 3));
  return `${s.slice(0, head)}…${s.slice(s.length - (max - 1 - head))}`;
}

/** `<title>` text: one `name: value` line per defined attribute. */
export function titleLines(attrs: Record<string, string | number | boolean | undefined>): string {
  return Object.entries(attrs)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${k}: ${String(v)}`)
    .join('\n');
}
