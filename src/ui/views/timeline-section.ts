import type { Finding } from '../../model/finding.js';
import type { SessionLineage } from '../../model/lineage.js';
import { html, type SafeHtml } from '../html.js';
import { renderTimeline } from '../timeline/render-timeline.js';
import { buildTimelineModel } from '../timeline/timeline-model.js';

/** The timeline figure with its legend and what the times mean; `current` names the finding whose page it is on. */
export function renderTimelineSection(lineage: SessionLineage & { source?: string }, findings: readonly Finding[], current?: string): SafeHtml {
  const model = buildTimelineModel(lineage, findings);
  const stored = pictureNotice(lineage);
  const undrawn = model.undrawn > 0
    ? html`<p class="muted">${model.undrawn === 1 ? '1 entry has no span time: it is' : `${model.undrawn} entries have no span time: they are`} in the tables only.</p>`
    : '';
  return html`${stored}<figure class="timeline-figure">${renderTimeline(model, current)}
<figcaption>Times are each emitter's own clock, relative to the first span (absolute UTC at both ends of the axis); hover any mark for its attributes.${
    lineage.eventsOmitted !== undefined && lineage.eventsOmitted > 0
      ? ` ${lineage.eventsOmitted} ordinary event${lineage.eventsOmitted === 1 ? ' is' : 's are'} left out (the oldest first; --max-kept-events); the events that explain the findings are kept.`
      : ''
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

/**
 * Says in words what the picture holds when it is not the correlator's full state of the session:
 * `source` and `missing` of the lineage (see SessionLineage).
 */
export function pictureNotice(l: Pick<SessionLineage, 'source' | 'missing'>): SafeHtml | '' {
  const gone = l.missing ?? [];
  if (gone.length > 0) {
    const what = `${gone.join(', ')} ${gone.length === 1 ? 'is' : 'are'} no longer held`;
    if (l.source === 'compacted') {
      return html`<p class="notice picture-partial">This session has no finding and was compacted when it went idle (--compact-after-ms): only its incarnations are kept, its ${what}.</p>`;
    }
    return html`<p class="notice picture-partial">The detector no longer holds this session and kept no lineage with its findings (they were stored before lineages were kept): the picture is rebuilt from the findings alone; its ${what}. The evidence spans of each finding are on the finding's page.</p>`;
  }
  if (l.source === 'compacted') {
    return html`<p class="notice picture-kept">The detector compacted this session when it went idle; the picture is the lineage kept with its findings, as it was then.</p>`;
  }
  if (l.source === 'stored') {
    return html`<p class="notice picture-kept">The detector no longer holds this session (expired, evicted, or not seen since a restart); the picture is the lineage kept with its findings.</p>`;
  }
  return '';
}
