import type { Finding, FindingKind } from '../../src/model/finding.js';
import type { Labels } from './wire-labels.js';

/** How the findings were obtained: the live detector, `forkwatch analyze` on the capture, or on a perturbed capture. */
export type ScoreMode = 'live' | 'offline' | 'offline+noise';

/** One disagreement between the wire's labels and forkwatch's findings. */
export interface Mismatch {
  mode: ScoreMode;
  path: string;
  cell: string;
  kind: FindingKind;
  /** `missed`: labelled, no finding of the kind; `false`: a finding of a kind the wire does not show. */
  what: 'missed' | 'false';
  /** The label's reason (missed) or the finding's summary (false). */
  detail: string;
}

/** True/false positives and misses of one kind on one path in one mode, counted per run. */
export interface Tally {
  tp: number;
  fp: number;
  fn: number;
  /** Labels of a kind the path cannot see (path-visibility.ts), found or not: not scored as misses. */
  unseen: number;
}

/** Tallies by `mode\u0000path\u0000kind`, and every mismatch. */
export class Scoreboard {
  readonly tallies = new Map<string, Tally>();
  readonly mismatches: Mismatch[] = [];
  /** Runs scored per mode and path. */
  readonly runs = new Map<string, number>();

  /** Scores one run: a kind counts once per run whether labelled, found, or both. */
  add(mode: ScoreMode, path: string, cell: string, labels: Labels, findings: readonly Finding[], sees: (kind: FindingKind) => boolean): void {
    this.runs.set(`${mode}\u0000${path}`, (this.runs.get(`${mode}\u0000${path}`) ?? 0) + 1);
    const found = new Map<FindingKind, Finding>();
    for (const f of findings) if (!found.has(f.kind)) found.set(f.kind, f);
    for (const kind of new Set<FindingKind>([...labels.keys(), ...found.keys()])) {
      const key = `${mode}\u0000${path}\u0000${kind}`;
      const t = this.tallies.get(key) ?? { tp: 0, fp: 0, fn: 0, unseen: 0 };
      this.tallies.set(key, t);
      const label = labels.get(kind);
      const f = found.get(kind);
      if (label !== undefined && f !== undefined) t.tp++;
      else if (label !== undefined && !sees(kind)) t.unseen++;
      else if (label !== undefined) {
        t.fn++;
        this.mismatches.push({ mode, path, cell, kind, what: 'missed', detail: label });
      } else if (f !== undefined) {
        t.fp++;
        this.mismatches.push({ mode, path, cell, kind, what: 'false', detail: f.summary });
      }
    }
  }
}

/** Precision tp / (tp + fp), recall tp / (tp + fn); `n/a` with nothing to divide. */
export function ratio(a: number, b: number): string {
  return b === 0 ? '  n/a' : (a / b).toFixed(3);
}
