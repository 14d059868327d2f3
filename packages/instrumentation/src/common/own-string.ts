/**
 * Strings a record keeps for a while, made its own: not a view of the SSE frame they were cut
 * from (which would keep the frame alive), and method names shared.
 */

/**
 * `s` as a string of its own. A slice of 13 or more chars is a view into the string it was cut
 * from (V8's SlicedString): a record that kept an event id or a token cut from an SSE frame kept
 * the whole frame alive. Appending a char and cutting it off again makes V8 flatten the pair
 * into a fresh string, which the result then views: the frame is let go, for any code units, in
 * JavaScript alone (a copy through a Buffer cost two native calls).
 */
export function detach(s: string): string {
  if (s.length < 13) return s;
  return (s + ' ').slice(0, -1);
}

/** Method names seen, by their text: a method kept per event is one shared string. */
const methods = new Map<string, string>();
const MAX_METHODS = 256;

/** `s` interned as a method name (see {@link internalized}), at most 256 names remembered. */
export function internMethod(s: string): string {
  const hit = methods.get(s);
  if (hit !== undefined) return hit;
  const own = internalized(s);
  if (methods.size < MAX_METHODS) methods.set(own, own);
  return own;
}

/**
 * `s` as V8's internalized copy (a property key's): compared with a literal such as
 * `'notifications/progress'` (the recorders do, per event) by pointer, where a copy of its own
 * was compared char by char (String::SlowEquals). Detached from `s` like {@link detach}.
 */
function internalized(s: string): string {
  const key = Object.keys({ [s]: true })[0];
  // An array-index-like name ("7") is kept as an element, its key a fresh string: still equal.
  return key === s ? key : detach(s);
}
