import type { Finding } from '../model/finding.js';
import type { SessionLineage } from '../model/lineage.js';
import type { Store } from '../storage/store.js';
import { mergeLineages } from '../correlate/kept-lineage.js';
import { lineageFromFindings } from './api-stored-lineage.js';

/** A session's lineage with `source` and `missing` set, and its stored findings. */
export interface SessionAnswerParts {
  lineage: SessionLineage & Required<Pick<SessionLineage, 'source' | 'missing'>>;
  findings: Finding[];
}

const ALL = { maxEvents: Infinity, maxIncarnations: Infinity, maxResumes: Infinity, maxRequests: Infinity };

/**
 * What GET /api/v1/sessions/:key and the incident view answer for `key`: what the correlator
 * holds (`live`, `compacted`) merged with the lineage kept with the session's findings, or, when
 * the correlator holds nothing, that kept lineage (`stored`), or else what the findings alone name
 * (`stored`, with everything but incarnations and orphaned requests `missing`). Undefined when
 * nothing is known of the key.
 */
export function sessionAnswer(
  key: string,
  engineLineage: (key: string) => SessionLineage | undefined,
  store: Pick<Store, 'findingsForSession' | 'getSessionEvidence'>,
): SessionAnswerParts | undefined {
  const findings = store.findingsForSession(key);
  const held = engineLineage(key);
  const kept = findings.length > 0 ? store.getSessionEvidence(key) : undefined;
  if (held !== undefined) {
    const source = held.source ?? 'live';
    if (kept === undefined) return { lineage: { ...held, source, missing: held.missing ?? [] }, findings };
    // A compacted session's summary knows less than what was kept when it compacted: the kept
    // lineage wins. A live one (woken after compaction) is what came after the kept part.
    const merged = source === 'compacted' ? mergeLineages(held, kept, ALL) : mergeLineages(kept, held, ALL);
    return { lineage: { ...merged, source, missing: [] }, findings };
  }
  if (kept !== undefined) return { lineage: { ...kept, findingIds: unionIds(kept.findingIds, findings), source: 'stored', missing: [] }, findings };
  if (findings.length === 0) return undefined;
  return { lineage: { ...lineageFromFindings(key, findings), source: 'stored', missing: ['events', 'resumes', 'requests'] }, findings };
}

function unionIds(ids: readonly string[], findings: readonly Finding[]): string[] {
  return [...new Set([...ids, ...findings.map((f) => f.id)])];
}
