/**
 * Detector ingest, end to end on one process: OTLP decode → correlation engine → SQLite group
 * commits (a real file, WAL), over realistic batches (512 spans, as the SDK's BatchSpanProcessor
 * sends) made by the real SDK serializers: forkwatch spans of many sessions (healthy resumes with
 * a seed fork every 50th session) mixed with foreign HTTP spans. The same payloads are also
 * decoded bare, in alternating rounds, so the ratio is measured side by side. Both start from the
 * request body bytes (JSON: UTF-8 to string included), as the OTLP receiver does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diag } from '@opentelemetry/api';
import { CorrelationEngine } from '../src/correlate/correlation-engine.js';
import type { SpanRecord } from '../src/model/span-record.js';
import { decodeJson } from '../src/otlp/decode-json.js';
import { decodeProtobuf } from '../src/otlp/decode-protobuf.js';
import { IngestPipeline } from '../src/service/ingest-pipeline.js';
import { openStore } from '../src/storage/open-store.js';
import { loadIngestPayloads } from './ingest-payloads.js';

function bareDecode(payloads: Uint8Array[], decode: (p: never) => { spans: SpanRecord[] }): number {
  const t0 = performance.now();
  let n = 0;
  for (const p of payloads) n += decode(p as never).spans.length;
  if (n < 0) throw new Error('unreachable');
  return (performance.now() - t0) / 1000;
}

function endToEnd(payloads: Uint8Array[], decode: (p: never) => { spans: SpanRecord[] }): { seconds: number; findings: number } {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-bench-'));
  const store = openStore({ path: join(dir, 'bench.db') });
  let findings = 0;
  let pipeline: IngestPipeline | undefined;
  const engine = new CorrelationEngine({ now: () => Date.now() }, {
    onFinding: (f) => {
      findings++;
      pipeline?.addFinding(f);
    },
  }, { decisionWindowMs: 0 });
  pipeline = new IngestPipeline({ engine, store, maxQueuedSpans: Number.MAX_SAFE_INTEGER, commitIntervalMs: 1_000_000, logger: diag });
  const t0 = performance.now();
  let i = 0;
  for (const p of payloads) {
    const r = pipeline.offer(decode(p as never).spans);
    if (r instanceof Promise) r.catch(() => undefined);
    // Group commit every 8 requests, as the server's commit interval batches concurrent exports.
    if (++i % 8 === 0) {
      engine.tick();
      pipeline.flush();
    }
  }
  engine.decideAll();
  pipeline.flush();
  const seconds = (performance.now() - t0) / 1000;
  store.close();
  rmSync(dir, { recursive: true, force: true });
  return { seconds, findings };
}

export interface IngestBenchResult {
  format: 'protobuf' | 'json';
  spans: number;
  forkwatchSpans: number;
  bareDecodeSpansPerSec: number;
  endToEndSpansPerSec: number;
  endToEndForkwatchSpansPerSec: number;
  /** Median over the rounds of end-to-end rate / bare decode rate, each round's pair run back to back. */
  ratio: number;
  /** Lowest and highest per-round ratio: how much the machine's noise moved it. */
  ratioRange: [number, number];
  rounds: number;
  findings: number;
}

/**
 * Alternating bare/end-to-end round pairs per format: rates are medians over the rounds, the
 * ratio is the median of the pairs' ratios (a pair runs back to back, so a burst of load from
 * elsewhere on the machine tends to hit both of its halves). Protobuf rounds take about a
 * second, so it gets more of them than JSON (about 7 s each).
 */
export function benchIngest(opts: { sessions?: number; forkwatchRatio?: number; rounds?: { protobuf: number; json: number } } = {}): IngestBenchResult[] {
  const payloads = loadIngestPayloads(opts.sessions ?? 3000, opts.forkwatchRatio ?? 0.2);
  const out: IngestBenchResult[] = [];
  for (const format of ['protobuf', 'json'] as const) {
    const rounds = opts.rounds?.[format] ?? (format === 'protobuf' ? 9 : 3);
    const data = format === 'protobuf' ? payloads.protobuf : payloads.json;
    const decode = (format === 'protobuf' ? decodeProtobuf : decodeJson) as (p: never) => { spans: SpanRecord[] };
    bareDecode(data, decode); // warm-up
    endToEnd(data, decode);
    const bare: number[] = [];
    const e2e: number[] = [];
    let findings = 0;
    for (let r = 0; r < rounds; r++) {
      bare.push(bareDecode(data, decode));
      const e = endToEnd(data, decode);
      e2e.push(e.seconds);
      findings = e.findings;
    }
    const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const bareRate = payloads.spans / med(bare);
    const e2eRate = payloads.spans / med(e2e);
    const ratios = bare.map((b, i) => b / e2e[i]!);
    out.push({
      format,
      spans: payloads.spans,
      forkwatchSpans: payloads.forkwatchSpans,
      bareDecodeSpansPerSec: bareRate,
      endToEndSpansPerSec: e2eRate,
      endToEndForkwatchSpansPerSec: payloads.forkwatchSpans / med(e2e),
      ratio: med(ratios),
      ratioRange: [Math.min(...ratios), Math.max(...ratios)],
      rounds,
      findings,
    });
  }
  return out;
}
