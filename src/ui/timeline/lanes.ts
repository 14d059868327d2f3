/** One horizontal lane of the timeline: everything one side (or observer) of the session saw. */
export interface Lane {
  key: string;
  label: string;
}

/** A span reference as the lineage gives it; `observer` names a third party (a proxy) when present. */
export interface LaneRef {
  side: string;
  observer?: unknown;
}

const KNOWN: Record<string, { order: number; label: string }> = {
  client: { order: 0, label: 'client' },
  proxy: { order: 1, label: 'proxy (wire)' },
  server: { order: 2, label: 'server' },
};

/** Longest lane label drawn, in characters (the rest goes in the hover title). */
const MAX_LANE_LABEL = 14;

/**
 * The lane a span belongs to: its observer when one is named (a proxy that saw the wire marks its
 * spans so), else its side. Sides other than client and server get a lane of their own rather
 * than being folded into one of those.
 */
export function laneKeyOf(ref: LaneRef): string {
  if (typeof ref.observer === 'string' && ref.observer !== '' && ref.observer !== ref.side) return ref.observer;
  return typeof ref.side === 'string' && ref.side !== '' ? ref.side : 'unknown';
}

/** Lanes in reading order: client, proxy, server, then any other key alphabetically. */
export function orderLanes(keys: Iterable<string>): Lane[] {
  const unique = [...new Set(keys)];
  unique.sort((a, b) => (KNOWN[a]?.order ?? 3) - (KNOWN[b]?.order ?? 3) || (a < b ? -1 : a > b ? 1 : 0));
  return unique.map((key) => ({ key, label: KNOWN[key]?.label ?? (key.length > MAX_LANE_LABEL ? `${key.slice(0, MAX_LANE_LABEL - 1)}…` : key) }));
}
