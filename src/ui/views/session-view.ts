import type { Finding } from '../../model/finding.js';
import type { LineagePart, SessionLineage } from '../../model/lineage.js';
import { formatAbsolute, formatAge } from '../format-time.js';
import { html, type SafeHtml } from '../html.js';
import { uiFindingPath } from '../ui-paths.js';
import { API_V1 } from '../../http/api-finding-json.js';
import { oneLine } from './findings-list-view.js';
import { renderPage } from './page-layout.js';
import { renderTimelineSection } from './timeline-section.js';

export interface SessionViewInput {
  lineage: SessionLineage & { source?: string };
  findings: readonly Finding[];
  nowMs: number;
  signedIn?: boolean;
}

const opt = (v: string | number | boolean | undefined): string => (v === undefined ? '' : String(v));
const time = (ms: number | undefined): string => (ms === undefined ? '' : formatAbsolute(ms));

/** `/ui/sessions/:key`: the lineage as a timeline picture, then as tables. */
export function renderSessionPage(v: SessionViewInput): SafeHtml {
  const l = v.lineage;
  const findings = v.findings.map(
    (f) => html`<tr><td><span class="kind ${f.kind}">${f.kind}</span></td><td><a href="${uiFindingPath(f.id)}">${oneLine(f.summary)}</a></td><td>${formatAge(f.detectedAtMs, v.nowMs)}</td></tr>`,
  );
  const incs = l.incarnations.map(
    (i) => html`<tr${i.createdBy !== undefined && i.createdBy !== 'initialize' ? html` class="minted"` : ''}><td class="id">${i.incarnation}</td><td>${opt(i.createdBy)}${
      i.createdBy !== undefined && i.createdBy !== 'initialize' ? html` <strong>(minted: the fork)</strong>` : ''
    }</td><td>${opt(i.source)}</td><td>${time(i.created?.timeMs)}</td><td>${i.ended ? `${time(i.ended.timeMs)} (${i.ended.reason})` : ''}</td><td>${opt(i.lastSeq)}</td><td>${i.eventCount}</td></tr>`,
  );
  const resumes = l.resumes.map(
    (r) => html`<tr><td>${time(r.timeMs)}</td><td>${r.side}</td><td class="id">${r.lastEventId}</td><td>${opt(r.status)}</td><td>${opt(r.outcome)}</td><td class="id">${r.previousIncarnation !== undefined ? `${r.previousIncarnation} → ` : ''}${opt(r.incarnation)}</td></tr>`,
  );
  const requests = l.requests.map(
    (r) => html`<tr><td class="id">${r.requestId}</td><td>${opt(r.method)} ${opt((r as { tool?: string }).tool)}</td><td class="id">${opt(r.progressToken)}</td><td>${r.state === 'orphaned' ? html`<strong>orphaned</strong>` : r.state}</td><td>${opt(r.outcome)}</td><td>${time(r.sent?.timeMs)}</td></tr>`,
  );
  const events = l.events.map(
    (e) => html`<tr><td>${time(e.timeMs)}</td><td>${e.side}</td><td class="id">${e.eventId}</td><td>${opt(e.seq)}</td><td class="id">${opt(e.incarnation)}</td><td>${opt(e.jsonrpcKind)} ${opt(e.jsonrpcId)}</td><td>${opt(e.delivery)}${e.replayed ? ' (replayed)' : ''}</td></tr>`,
  );
  const gone = (part: LineagePart, none: string): string =>
    l.missing?.includes(part) === true ? `No longer held: the detector kept none of this session's ${part} (see the note above the timeline).` : none;
  const table = (head: string[], rows: SafeHtml[], none: string): SafeHtml =>
    rows.length === 0 ? html`<p class="muted">${none}</p>` : html`<table><thead><tr>${head.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody>${rows}</tbody></table>`;
  return renderPage(
    `Session ${l.sessionKey.slice(0, 12)}`,
    html`<h1>Session <span class="mono">${l.sessionKey}</span></h1>
<dl class="facts"><dt>service</dt><dd>${l.service}</dd>${l.clientService !== undefined ? html`<dt>client service</dt><dd>${l.clientService}</dd>` : ''}
<dt>source</dt><dd>${opt(l.source)}</dd><dt>last activity</dt><dd>${time(l.lastActivityMs)} (${formatAge(l.lastActivityMs, v.nowMs)})</dd>
<dt>JSON</dt><dd><a href="${API_V1}/sessions/${encodeURIComponent(l.sessionKey)}">${API_V1}/sessions/…</a></dd></dl>
<h2>Timeline</h2>
${renderTimelineSection(l, v.findings)}
<h2>Findings</h2>
${table(['kind', 'summary', 'age'], findings, 'No findings for this session.')}
<h2>Incarnations</h2>
${table(['incarnation', 'created by', 'source', 'created', 'ended', 'last seq', 'events'], incs, 'No incarnation known.')}
<h2>Resumes</h2>
${table(['time', 'side', 'Last-Event-ID', 'status', 'outcome', 'incarnation'], resumes, gone('resumes', 'No resume seen.'))}
<h2>Requests</h2>
${table(['id', 'method', 'progress token', 'state', 'outcome', 'sent'], requests, gone('requests', 'No tracked request.'))}
<details><summary>Events (${l.events.length})</summary>
${table(['time', 'side', 'event id', 'seq', 'incarnation', 'JSON-RPC', 'delivery'], events, gone('events', 'No events kept.'))}
</details>`,
    { signedIn: v.signedIn },
  );
}
