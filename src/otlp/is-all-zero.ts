/** True when every byte of `buf[start, end)` is zero (an invalid OpenTelemetry trace or span id). */
export function isAllZero(buf: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (buf[i] !== 0) return false;
  return true;
}
