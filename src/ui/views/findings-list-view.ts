import type { Finding } from '../../model/finding.js';
import { formatAbsolute, formatAge } from '../format-time.js';
import { html, type SafeHtml } from '../html.js';
import { UI_PREFIX, uiFindingPath, uiListPath, uiSessionPath, type ListFilters } from '../ui-paths.js';
import { renderPage } from './page-layout.js';

/** Longest summary shown in the list, in characters (the whole one is the row's title). */
const MAX_LIST_SUMMARY = 180;
/** `since` choices offered as links; any value the API accepts can be typed. */
const SINCE_CHOICES = ['15m', '1h', '24h', '7d'] as const;

export interface FindingsListViewInput {
  items: readonly Finding[];
  nextCursor?: string;
  filters: ListFilters;
  kinds: readonly string[];
  nowMs: number;
  /** A bad filter value: shown instead of results. */
  error?: string;
  signedIn?: boolean;
}

/** The first sentence-ish line of a summary, cut to fit a table row. */
export function oneLine(summary: string): string {
  const line = summary.replace(/\s+/g, ' ').trim();
  return line.length > MAX_LIST_SUMMARY ? `${line.slice(0, MAX_LIST_SUMMARY - 1)}…` : line;
}

/** `GET /ui/`: recent findings with filters as a plain form and links, paged by cursor. */
export function renderFindingsList(v: FindingsListViewInput): SafeHtml {
  const f = v.filters;
  const kindOptions = v.kinds.map((k) => html`<option value="${k}"${f.kind === k ? html` selected` : ''}>${k}</option>`);
  const quick = v.kinds.map((k) => html`<a href="${uiListPath({ ...f, kind: k, cursor: undefined })}">${k}</a>`);
  const since = SINCE_CHOICES.map((s) => html`<a href="${uiListPath({ ...f, since: s, cursor: undefined })}">last ${s}</a>`);
  const rows = v.items.map(
    (x) => html`<tr class="finding-row">
<td><span class="kind ${x.kind}">${x.kind}</span></td>
<td>${x.service}</td>
<td title="${formatAbsolute(x.detectedAtMs)}">${formatAge(x.detectedAtMs, v.nowMs)}</td>
<td class="summary" title="${x.summary}"><a href="${uiFindingPath(x.id)}">${oneLine(x.summary)}</a></td>
<td class="id"><a href="${uiSessionPath(x.sessionKey)}" title="${x.sessionKey}">${x.sessionKey.slice(0, 12)}…</a></td></tr>`,
  );
  const filtered = f.kind !== undefined || f.service !== undefined || f.since !== undefined;
  const body = v.error !== undefined
    ? html`<p class="error">${v.error}</p>`
    : v.items.length === 0
      ? html`<p class="notice">No findings${filtered ? ' match these filters' : ' yet'}.</p>`
      : html`<table class="findings"><thead><tr><th>kind</th><th>service</th><th>age</th><th>summary</th><th>session</th></tr></thead><tbody>${rows}</tbody></table>`;
  const pager = html`<nav class="pager">${f.cursor !== undefined ? html`<a href="${uiListPath({ ...f, cursor: undefined })}">← newest</a>` : ''}${
    v.nextCursor !== undefined ? html`<a rel="next" href="${uiListPath({ ...f, cursor: v.nextCursor })}">older →</a>` : ''
  }</nav>`;
  return renderPage(
    'Recent findings',
    html`<h1>Recent findings</h1>
<form class="filters" method="get" action="${UI_PREFIX}/">
<label>kind<select name="kind"><option value="">all kinds</option>${kindOptions}</select></label>
<label>service<input name="service" value="${f.service ?? ''}" placeholder="service.name"></label>
<label>since<input name="since" value="${f.since ?? ''}" placeholder="15m, 2h, RFC 3339"></label>
<button type="submit">Filter</button>${filtered ? html` <a href="${UI_PREFIX}/">clear</a>` : ''}
</form>
<p class="quick">kind: ${quick}</p>
<p class="quick">since: ${since}</p>
${body}
${pager}
<h2>Open a session</h2>
<form class="inline" method="get" action="${UI_PREFIX}/sessions"><label>session key (forkwatch.session.key)<input name="key" size="40" required></label><button type="submit">Open timeline</button></form>`,
    { signedIn: v.signedIn },
  );
}
