/**
 * Span and trace ids as hex made in JavaScript instead of by Buffer's native hexSlice. A native
 * slice is a call into C++ (argument checks, the view's buffer and length, a handle scope), which
 * costs several times the work of converting 8 bytes, and every forkwatch span needs one. One
 * `String.fromCharCode` call with every code unit as an argument makes the same flat one-byte
 * string (an apply over an array, or joining halves, was slower or made a cons string).
 */

const HEX = new Uint8Array(16);
for (let i = 0; i < 16; i++) HEX[i] = '0123456789abcdef'.charCodeAt(i);
const fromCharCode = String.fromCharCode;

/** Lowercase hex of the 8 bytes at `buf[s]` (a span id). */
export function hex8(buf: Uint8Array, s: number): string {
  const h = HEX;
  const a = buf[s]!;
  const b = buf[s + 1]!;
  const c = buf[s + 2]!;
  const d = buf[s + 3]!;
  const e = buf[s + 4]!;
  const f = buf[s + 5]!;
  const g = buf[s + 6]!;
  const i = buf[s + 7]!;
  return fromCharCode(
    h[a >>> 4]!, h[a & 15]!, h[b >>> 4]!, h[b & 15]!, h[c >>> 4]!, h[c & 15]!, h[d >>> 4]!, h[d & 15]!,
    h[e >>> 4]!, h[e & 15]!, h[f >>> 4]!, h[f & 15]!, h[g >>> 4]!, h[g & 15]!, h[i >>> 4]!, h[i & 15]!,
  );
}

/** Lowercase hex of the 16 bytes at `buf[s]` (a trace id). */
export function hex16(buf: Uint8Array, s: number): string {
  const h = HEX;
  const a = buf[s]!;
  const b = buf[s + 1]!;
  const c = buf[s + 2]!;
  const d = buf[s + 3]!;
  const e = buf[s + 4]!;
  const f = buf[s + 5]!;
  const g = buf[s + 6]!;
  const i = buf[s + 7]!;
  const j = buf[s + 8]!;
  const k = buf[s + 9]!;
  const l = buf[s + 10]!;
  const m = buf[s + 11]!;
  const n = buf[s + 12]!;
  const o = buf[s + 13]!;
  const p = buf[s + 14]!;
  const q = buf[s + 15]!;
  return fromCharCode(
    h[a >>> 4]!, h[a & 15]!, h[b >>> 4]!, h[b & 15]!, h[c >>> 4]!, h[c & 15]!, h[d >>> 4]!, h[d & 15]!,
    h[e >>> 4]!, h[e & 15]!, h[f >>> 4]!, h[f & 15]!, h[g >>> 4]!, h[g & 15]!, h[i >>> 4]!, h[i & 15]!,
    h[j >>> 4]!, h[j & 15]!, h[k >>> 4]!, h[k & 15]!, h[l >>> 4]!, h[l & 15]!, h[m >>> 4]!, h[m & 15]!,
    h[n >>> 4]!, h[n & 15]!, h[o >>> 4]!, h[o & 15]!, h[p >>> 4]!, h[p & 15]!, h[q >>> 4]!, h[q & 15]!,
  );
}
