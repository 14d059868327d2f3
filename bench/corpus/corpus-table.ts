import { FORK_KINDS, ORPHANED_PROGRESS_TOKEN, REQUEST_ANOMALY_KINDS, type FindingKind } from '../../src/model/finding.js';
import { ratio, type Scoreboard, type ScoreMode } from './score.js';

const KINDS: readonly FindingKind[] = [...FORK_KINDS, ORPHANED_PROGRESS_TOKEN, ...REQUEST_ANOMALY_KINDS];

/**
 * The corpus table: per mode and path, runs and per kind `P/R (tp fp fn +unseen)` (unseen: labels
 * of a kind the path cannot see, not scored as misses); then every mismatch.
 */
export function corpusTable(board: Scoreboard, modes: readonly ScoreMode[], paths: readonly string[]): string[] {
  const out: string[] = [];
  out.push(`${'mode'.padEnd(14)} ${'path'.padEnd(22)} ${'runs'.padStart(4)}  ${KINDS.map((k) => k.padEnd(26)).join('')}`);
  for (const mode of modes) {
    for (const path of paths) {
      const runs = board.runs.get(`${mode}\u0000${path}`) ?? 0;
      if (runs === 0) continue;
      const cells = KINDS.map((k) => {
        const t = board.tallies.get(`${mode}\u0000${path}\u0000${k}`);
        if (!t) return '-'.padEnd(26);
        return `${ratio(t.tp, t.tp + t.fp)}/${ratio(t.tp, t.tp + t.fn)} (${t.tp} ${t.fp} ${t.fn}${t.unseen ? ` +${t.unseen}` : ''})`.padEnd(26);
      });
      out.push(`${mode.padEnd(14)} ${path.padEnd(22)} ${String(runs).padStart(4)}  ${cells.join('')}`);
    }
  }
  out.push('');
  out.push(board.mismatches.length === 0 ? 'mismatches: none' : `mismatches: ${board.mismatches.length}`);
  for (const m of board.mismatches) out.push(`  ${m.mode.padEnd(14)} ${m.cell}: ${m.what} ${m.kind}: ${m.detail}`);
  return out;
}
