/**
 * Cuts `s` to at most `max` UTF-16 code units without leaving half a surrogate pair at the end.
 */
export function cutString(s: string, max: number): string {
  if (s.length <= max) return s;
  let out = s.slice(0, max);
  const last = out.charCodeAt(out.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) out = out.slice(0, -1);
  return out;
}
