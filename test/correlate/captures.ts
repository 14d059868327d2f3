import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Finding, ResumeOutcome } from '../../src/model/finding.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { decodeJson } from '../../src/otlp/decode-json.js';
import { harness } from './harness.js';

const DIR = new URL('../fixtures/otlp/', import.meta.url);

/** Every OTLP JSON capture in test/fixtures/otlp/ (one ExportTraceServiceRequest per line), decoded as the detector would. */
export function allCaptures(): Array<{ name: string; spans: SpanRecord[] }> {
  const out: Array<{ name: string; spans: SpanRecord[] }> = [];
  for (const f of readdirSync(fileURLToPath(DIR)).sort()) {
    if (!/\.jsonl?$/.test(f) || f.endsWith('.expected.json')) continue;
    const spans: SpanRecord[] = [];
    for (const line of readFileSync(new URL(f, DIR), 'utf8').split('\n')) if (line.trim() !== '') spans.push(...decodeJson(line).spans);
    out.push({ name: f, spans });
  }
  return out;
}

/** What must not depend on arrival: each finding without its detector-clock times, and the resume outcomes. */
export interface Outcome {
  findings: string[];
  resumes: ResumeOutcome[];
}

function normal(f: Finding): string {
  const { detectedAtMs: _d, resolvedAtMs, ...rest } = f;
  return JSON.stringify({ ...rest, resolved: resolvedAtMs !== undefined });
}

/**
 * Feeds the batches in order, 50 ms apart on the detector clock (well inside the 10 s window),
 * then lets every session and stateless call be decided; merges updates into the findings they update.
 */
export function runBatches(batches: SpanRecord[][]): Outcome {
  const h = harness();
  for (const b of batches) {
    h.ingest(b);
    h.advance(50);
  }
  // Past the decision window and the stateless re-issue window (30 s), so orphaned requests are decided too.
  h.advance(10_000);
  h.advance(30_000);
  h.engine.decideAll();
  const byId = new Map<string, Finding>();
  for (const f of [...h.findings, ...h.updates, ...h.resolved]) byId.set(f.id, { ...byId.get(f.id), ...f });
  return {
    findings: [...byId.values()].map(normal).sort(),
    resumes: h.resumes.map((r) => r.outcome).sort(),
  };
}

/** Deterministic PRNG (mulberry32) so a failing seed can be replayed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Cuts a list into consecutive batches of random sizes (1..max). */
export function cut<T>(xs: T[], rnd: () => number, max = 8): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; ) {
    const n = 1 + Math.floor(rnd() * max);
    out.push(xs.slice(i, i + n));
    i += n;
  }
  return out;
}

export function shuffle<T>(xs: T[], rnd: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
