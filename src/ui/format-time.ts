/** Absolute time as `2026-12-03 10:04:15.123Z` (UTC, ms); `?` for a non-finite value. */
export function formatAbsolute(ms: number): string {
  if (!Number.isFinite(ms)) return '?';
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? '?' : d.toISOString().replace('T', ' ');
}

/** A signed offset in ms as `+0 ms`, `+850 ms`, `+1.25 s`, `+2 min 5 s`. */
export function formatOffset(ms: number): string {
  const sign = ms < 0 ? '−' : '+';
  return `${sign}${formatDuration(Math.abs(ms))}`;
}

/** A duration in ms, short: `850 ms`, `1.25 s`, `2 min 5 s`, `3 h 10 min`, `4 d 2 h`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '?';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${trim((ms / 1000).toFixed(ms < 10_000 ? 2 : 1))} s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h${Math.floor((s % 3600) / 60) ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
  return `${Math.floor(s / 86_400)} d${Math.floor((s % 86_400) / 3600) ? ` ${Math.floor((s % 86_400) / 3600)} h` : ''}`;
}

/** How long ago `ms` was at `nowMs`: `12 s ago`, `3 min ago`; `in the future` on clock skew. */
export function formatAge(ms: number, nowMs: number): string {
  const d = nowMs - ms;
  if (d < 0) return 'in the future';
  if (d < 1000) return 'just now';
  return `${formatDuration(Math.floor(d / 1000) * 1000)} ago`;
}

function trim(s: string): string {
  return s.replace(/\.?0+$/, '');
}
