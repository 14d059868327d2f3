/** The char-level pieces of reading JSON text in place, without building it (scan-message.ts). */

/** JSON's three literal values. */
export const JSON_LITERALS = ['true', 'false', 'null'] as const;

/**
 * `word` is spelled at `t[at]` (the caller knows `t` has that many chars there). A loop the
 * compiler inlines: String.prototype.startsWith was a builtin call per key.
 */
export function same(t: string, at: number, word: string): boolean {
  for (let i = 0; i < word.length; i++) if (t.charCodeAt(at + i) !== word.charCodeAt(i)) return false;
  return true;
}

/** A char code of 0-9. */
export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
