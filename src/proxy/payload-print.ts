/**
 * A 53-bit fingerprint of an SSE event's data (cyrb53 over its UTF-16 code units), for the
 * proxy's own comparisons only: "the same event id with another payload" in the session log and
 * the guard's judgement. It never leaves the process: spans carry `forkwatch.sse.payload.digest`
 * (SHA-256, docs/telemetry.md), computed only when an event's span is emitted. The SHA-256 of
 * every event that passed was the proxy's largest per-event cost; this costs a few instructions
 * per character. Two different payloads collide with probability about 2^-53, and a collision
 * only hides a restart whose first event repeats an earlier id. `frame` and `start`: where `data`
 * lies in the flat text it was cut from (SseEvent.frame); the print is that of `data` either way.
 */
export function payloadPrint(data: string, frame?: string, start = 0): number {
  const n = data.length;
  // Read in place in the flat text `data` was cut from (SseEvent.frame) when given: the same chars.
  const t = frame ?? data;
  const from = frame === undefined ? 0 : start;
  let h1 = 0xdeadbeef ^ n;
  let h2 = 0x41c6ce57 ^ n;
  for (let i = from; i < from + n; i++) {
    const c = t.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
