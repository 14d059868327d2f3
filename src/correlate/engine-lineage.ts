import type { SessionLineage } from '../model/lineage.js';
import { buildLineage } from './build-lineage.js';
import type { SavedSession } from './codec/saved-session.js';
import { mergeLineages } from './kept-lineage.js';
import type { CompactSession, SessionState } from './session-state.js';

const UNBOUNDED = { maxEvents: Infinity, maxIncarnations: Infinity, maxResumes: Infinity, maxRequests: Infinity };

/**
 * The engine's answer for one key: a full session's lineage (`live`), or a compacted one's summary
 * (`compacted`) with the lineage `kept` at compaction while storage does not have it yet.
 */
export function heldLineage(full: SessionState | undefined, compacted: CompactSession | undefined, kept: SessionLineage | undefined, maxKeptEvents: number): SessionLineage | undefined {
  if (full !== undefined) return { ...buildLineage(full, maxKeptEvents), source: 'live' };
  if (compacted === undefined) return undefined;
  const summary = buildLineage(compacted);
  if (kept === undefined) return { ...summary, source: 'compacted' };
  // The kept lineage knows more than the summary of the same moment: it wins.
  const l = mergeLineages(summary, kept, { ...UNBOUNDED, maxEvents: maxKeptEvents });
  return { ...l, source: 'compacted', missing: [] };
}

/**
 * The lineage to keep of a session about to lose its full state (compacted, expired, evicted):
 * undefined without findings; whole (storage bounds it knowing which spans the findings cite),
 * after `prev` when one is still waiting for storage.
 */
export function lineageToKeep(s: SessionState, prev: SessionLineage | undefined): SessionLineage | undefined {
  let any = false;
  for (const _ in s.emitted) {
    any = true;
    break;
  }
  if (!any) return undefined;
  const l = buildLineage(s, Infinity);
  return prev === undefined ? l : mergeLineages(prev, l, UNBOUNDED);
}

/** Hands the kept lineages of the sessions in `out` to storage with their saved forms (taken out of `kept`). */
export function attachKept(out: SavedSession[], kept: Map<string, SessionLineage>): void {
  if (kept.size === 0) return;
  for (const o of out) {
    const k = kept.get(o.key);
    if (k === undefined) continue;
    o.evidence = k;
    kept.delete(o.key);
  }
}
