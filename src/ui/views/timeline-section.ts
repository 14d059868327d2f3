import type { Finding } from '../../model/finding.js';
import type { SessionLineage } from '../../model/lineage.js';
import { html, type SafeHtml } from '../html.js';
import { renderTimeline } from '../timeline/render-timeline.js';
import { buildTimelineModel } from '../timeline/timeline-model.js';

/** The timeline figure with its legend and what the times mean; `current` names the finding whose page it is on. */
export function renderTimelineSection(lineage: SessionLineage & { source?: string }, findings: readonly Finding[], current?: string): SafeHtml {
  const model = buildTimelineModel(lineage, findings);
  const stored = lineage.source === 'stored'
    ? html`<p class="notice">The detector no longer holds this session live: the picture is rebuilt from its stored findings, so events and resumes are missing.</p>`
    : '';
  const undrawn = model.undrawn > 0
    ? html`<p class="muted">${model.undrawn === 1 ? '1 entry has no span time: it is' : `${model.undrawn} entries have no span time: they are`} in the tables only.</p>`
    : '';
  return html`${stored}<figure class="timeline-figure">${renderTimeline(model, current)}
<figcaption>Times are each emitter's own clock, relative to the first span (absolute UTC at both ends of the axis); hover any mark for its attributes.${
    lineage.events.length > 0 ? ` The lineage keeps the session's most recent ${lineage.events.length} events.` : ''
  }</figcaption></figure>${undrawn}
<ul class="legend">
<li><span class="sw resume"></span>resume (Last-Event-ID → status)</li>
<li><span class="sw gap"></span>no traffic before a resume (stream broken)</li>
<li><span class="sw minted"></span>incarnation minted by something other than initialize (the fork)</li>
<li><span class="sw dropped"></span>event dropped by the client's dedup</li>
<li><span class="sw orphaned"></span>request never answered (orphaned)</li>
<li><span class="sw bin"></span>events aggregated (bar height ~ log count; red when some were dropped)</li>
</ul>`;
}
