/**
 * What the conformance suite (and the FastMCP test, which holds a third server to the same doc)
 * reads from a run's exports: every departure from docs/telemetry.md, and the finding kinds a real
 * detector reports when the exports are replayed into it.
 */
import assert from 'node:assert/strict';
import type { SpanRecord } from '../../src/model/span-record.js';
import { startDetector, type DetectorProcess } from '../e2e/helpers/detector.js';
import type { ReceivedExport } from './otlp-sink.js';
import { readSchema, violations } from './telemetry-schema.js';

/** A run's spans as the sink decoded them, its export requests as received, and the spans the decoder rejected. */
export interface ExportedRun {
  spans: SpanRecord[];
  exports: ReceivedExport[];
  rejected: number;
}

/** Every departure from the doc in a run's spans, and spans the decoder rejected. */
export function departures(run: ExportedRun, salt: string): string[] {
  const schema = readSchema();
  const out = run.spans.flatMap((s) => violations(s, schema, salt));
  if (run.rejected > 0) out.push(`${run.rejected} span(s) rejected by the OTLP decoder`);
  return out;
}

/**
 * Finding kinds a fresh detector reports for a run's exports replayed into it, polled until
 * unchanged for 3 s (at most 20 s). The detector is pushed onto `detectors` (the caller kills
 * them after its tests) and killed here once read.
 */
export async function replayedFindingKinds(run: ExportedRun, detectors: DetectorProcess[]): Promise<string[]> {
  // A short decision window: the replay is complete at once, nothing more is coming.
  const d = await startDetector({ args: ['--decision-window-ms', '1000', '--tick-interval-ms', '200'] });
  detectors.push(d);
  for (const e of run.exports) {
    const res = await fetch(`${d.otlpUrl}/v1/traces`, { method: 'POST', headers: { 'content-type': e.contentType }, body: e.body });
    assert.equal(res.status, 200, await res.text());
  }
  let last = '';
  let stableSince = Date.now();
  const deadline = Date.now() + 20_000;
  for (;;) {
    const items = ((await (await fetch(`${d.httpUrl}/api/v1/findings?limit=1000`)).json()) as { items: Array<{ kind: string }> }).items;
    const kinds = [...new Set(items.map((f) => f.kind))].sort();
    const now = JSON.stringify(kinds);
    if (now !== last) {
      last = now;
      stableSince = Date.now();
    } else if (Date.now() - stableSince >= 3000 || Date.now() > deadline) {
      await d.kill();
      return kinds;
    }
    await new Promise((r) => setTimeout(r, 150));
  }
}
