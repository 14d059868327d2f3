/**
 * A 53-bit fingerprint of an SSE event's data (cyrb53 over its UTF-16 code units), for the
 * proxy's own comparisons only: "the same event id with another payload" in the session log and
 * the guard's judgement. It never leaves the process: spans carry `forkwatch.sse.payload.digest`
 * (SHA-256, docs/telemetry.md), computed only when an event's span is emitted. The SHA-256 of
 * every event that passed was the proxy's largest per-event cost; this costs a few instructions
 * per character. Two different payloads collide with probability about 2^-53, and a collision
 * only hides a restart whose first event repeats an earlier id.
 */
export function payloadPrint(data: string): number {
  let h1 = 0xdeadbeef ^ data.length;
  let h2 = 0x41c6ce57 ^ data.length;
  for (let i = 0; i < data.length; i++) {
    const c = data.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
