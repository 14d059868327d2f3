import { readFileSync } from 'node:fs';
import { CorrelationEngine } from '../correlate/correlation-engine.js';
import type { Clock } from '../correlate/types.js';
import { createError, ForkwatchError } from '../errors.js';
import type { Finding } from '../model/finding.js';
import type { SpanRecord } from '../model/span-record.js';
import { decodeJson } from '../otlp/decode-json.js';

/**
 * `forkwatch analyze FILE...`: offline forensics over OTLP JSON exports (one
 * ExportTraceServiceRequest per line, as the Collector's file exporter writes). Feeds every span
 * to the same engine the detector runs, then lets every decision window elapse. Exit 1 when
 * anything was found, 0 when nothing, 2 on usage errors.
 */
export async function runAnalyze(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const files = argv.filter((a) => a !== '--json');
  const unknown = files.find((f) => f.startsWith('--'));
  if (unknown) throw createError('FORKWATCH_ERR_CLI_USAGE', `analyze: unknown flag ${unknown}`);
  if (files.length === 0) throw createError('FORKWATCH_ERR_CLI_USAGE', 'analyze needs at least one FILE (OTLP JSON lines)');
  const spans: SpanRecord[] = [];
  let badLines = 0;
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw createError('FORKWATCH_ERR_CLI_USAGE', `analyze: cannot read ${file}: ${(err as Error).message}`);
    }
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        spans.push(...decodeJson(line).spans);
      } catch (err) {
        badLines++;
        process.stderr.write(`forkwatch: ${file}:${i + 1}: ${err instanceof ForkwatchError ? err.message : String(err)}\n`);
      }
    });
  }
  // The clock follows the spans' own times: offline, "now" is the end of the capture.
  let now = spans.reduce((m, s) => Math.max(m, s.endMs), 0);
  const clock: Clock = { now: () => now };
  const found = new Map<string, Finding>();
  const engine = new CorrelationEngine(clock, {
    onFinding: (f) => void found.set(f.id, f),
    onFindingResolved: (f) => void found.set(f.id, f),
  }, { sessionTtlMs: Number.MAX_SAFE_INTEGER / 4, compactAfterMs: Number.MAX_SAFE_INTEGER / 4 });
  engine.ingest(spans.sort((a, b) => a.startMs - b.startMs));
  now += 24 * 3_600_000;
  engine.decideAll();
  engine.tick();
  const findings = [...found.values()].sort((a, b) => a.firstSeenMs - b.firstSeenMs);
  if (json) {
    process.stdout.write(`${JSON.stringify({ spans: spans.length, badLines, findings }, null, 2)}\n`);
  } else {
    process.stdout.write(`analyzed ${spans.length} forkwatch spans from ${files.length} file(s)${badLines ? `, ${badLines} undecodable line(s)` : ''}\n`);
    if (findings.length === 0) process.stdout.write('no forks, no orphaned progress tokens\n');
    for (const f of findings) {
      process.stdout.write(`\n${f.kind}${f.resolvedAtMs ? ' (resolved)' : ''}  service=${f.service}  session=${f.sessionKey.slice(0, 12)}…  id=${f.id}\n  ${f.summary}\n`);
      for (const e of f.evidence) {
        process.stdout.write(`    ${new Date(e.timeMs).toISOString()} ${e.side.padEnd(6)} ${e.spanName} trace=${e.traceId} span=${e.spanId}: ${e.shows}\n`);
      }
    }
  }
  return findings.length > 0 ? 1 : badLines > 0 ? 2 : 0;
}
