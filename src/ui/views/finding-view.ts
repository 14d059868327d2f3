import type { Finding } from '../../model/finding.js';
import type { SessionLineage } from '../../model/lineage.js';
import { formatAbsolute, formatAge, formatOffset } from '../format-time.js';
import { html, type SafeHtml } from '../html.js';
import { adviceFor, runbookLink } from '../runbook-advice.js';
import { uiSessionPath } from '../ui-paths.js';
import { API_V1 } from '../../http/api-finding-json.js';
import { renderPage } from './page-layout.js';
import { renderTimelineSection } from './timeline-section.js';

export interface FindingViewInput {
  finding: Finding;
  /** The session's lineage, when the detector has one (live or rebuilt from findings). */
  lineage?: SessionLineage & { source?: string };
  sessionFindings: readonly Finding[];
  nowMs: number;
  signedIn?: boolean;
}

/** `/ui/findings/:id`: what happened, what to do, the evidence spans, and the session's timeline. */
export function renderFindingPage(v: FindingViewInput): SafeHtml {
  const f = v.finding;
  const advice = adviceFor(f.kind);
  // No "open the timeline below" when the events it would show are gone.
  const timelineGone = v.lineage === undefined || (v.lineage.missing ?? []).includes('events');
  const evidence = [...f.evidence].sort((a, b) => a.timeMs - b.timeMs);
  const t0 = evidence[0]?.timeMs ?? f.firstSeenMs;
  const facts: Array<[string, SafeHtml | string | undefined]> = [
    ['kind', html`<span class="kind ${f.kind}">${f.kind}</span>`],
    ['service', f.service],
    ['session key', html`<a class="mono" href="${uiSessionPath(f.sessionKey)}">${f.sessionKey}</a>`],
    ['incarnation', f.incarnation],
    ['new incarnation', f.newIncarnation],
    ['request id', f.requestId],
    ['progress token', f.progressToken],
    ['first seen', formatAbsolute(f.firstSeenMs)],
    ['detected', `${formatAbsolute(f.detectedAtMs)} (${formatAge(f.detectedAtMs, v.nowMs)})`],
    ['resolved', f.resolvedAtMs === undefined ? undefined : formatAbsolute(f.resolvedAtMs)],
    ['finding id', html`<span class="mono">${f.id}</span> · <a href="${API_V1}/findings/${encodeURIComponent(f.id)}">JSON</a>`],
  ];
  const rows = evidence.map(
    (e) => html`<tr><td title="${formatAbsolute(e.timeMs)}">${formatOffset(e.timeMs - t0)}</td><td>${e.side}</td><td class="mono">${e.spanName}</td><td>${e.shows}</td><td class="id">${e.traceId}<br>${e.spanId}</td></tr>`,
  );
  const timeline = v.lineage
    ? renderTimelineSection(v.lineage, v.sessionFindings, f.id)
    : html`<p class="notice">The detector holds nothing more of this session.</p>`;
  return renderPage(
    `${f.kind} · ${f.service}`,
    html`<h1><span class="kind ${f.kind}">${f.kind}</span> on ${f.service}</h1>
<p class="summary-box">${f.summary}</p>
<dl class="facts">${facts.filter(([, val]) => val !== undefined).map(([k, val]) => html`<dt>${k}</dt><dd>${val}</dd>`)}</dl>
<h2>What to do</h2>
<ol class="steps">${advice.steps.map((s) => html`<li>${timelineGone ? withoutTimeline(s) : s}</li>`)}</ol>
<p>Runbook: <a href="${runbookLink(f.kind)}">${advice.alert}</a> (docs/runbook.md)</p>
<h2>Evidence</h2>
<table class="evidence"><thead><tr><th title="relative to the first evidence span">time</th><th>side</th><th>span</th><th>shows</th><th>trace / span id</th></tr></thead><tbody>${rows}</tbody></table>
<h2 id="timeline">Session timeline</h2>
${timeline}
<p><a href="${uiSessionPath(f.sessionKey)}">The whole session: incarnations, resumes, requests, events</a></p>`,
    { signedIn: v.signedIn },
  );
}

const OPEN_TIMELINE = 'Open the timeline below';

/** An advice step pointing at the timeline, reworded for a finding whose session's events are gone. */
function withoutTimeline(step: string): string {
  if (!step.startsWith(OPEN_TIMELINE)) return step;
  const rest = step.slice(OPEN_TIMELINE.length).replace(/^[:,]\s*/, '');
  return `The session's events are no longer held (see the note under "Session timeline"); the evidence spans below are the record${rest ? `: ${rest}` : '.'}`;
}
