/**
 * HTML built by tagged templates: every interpolated value is escaped unless it is already
 * {@link SafeHtml}. Session data (event ids, tool names, service names) is attacker-controlled, so
 * escaping is the default and markup is the exception that has to be asked for.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Bidirectional formatting controls (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI, LRM, RLM, ALM):
 * invisible, and able to reorder the text around them, so a hostile `service.name` could make a
 * page read otherwise than the data says.
 */
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

/**
 * Escapes `&`, `<`, `>`, `"` and `'`: safe in element content and in quoted attribute values (HTML
 * and SVG). C0 controls other than tab/newline become U+FFFD, since XML parsers reject them.
 * Bidi controls are shown visibly as `\u202E` (and kin) instead of acting: every value rendered
 * goes through here, so no page can be reordered by one.
 */
export function escapeHtml(value: unknown): string {
  return String(value)
    .replace(/[&<>"']/g, (c) => ESCAPES[c]!)
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '\ufffd')
    .replace(BIDI_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
}

/** Markup known to be safe: built by {@link html} or {@link trustedHtml}. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** A value an `html` template accepts: text (escaped), numbers, markup, lists of these, or nothing. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(v: HtmlValue): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(v);
}

/** Tagged template: `html\`<td>${userText}</td>\`` escapes `userText`. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** Marks a constant written in this code base as markup. Never pass data through it. */
export function trustedHtml(constant: string): SafeHtml {
  return new SafeHtml(constant);
}

/** Joins fragments with a separator (escaped like any value). */
export function joinHtml(parts: readonly HtmlValue[], separator: HtmlValue = ''): SafeHtml {
  return new SafeHtml(parts.map(render).join(render(separator)));
}
