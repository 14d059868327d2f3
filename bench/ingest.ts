/**
 * Detector ingest, end to end on one process: OTLP decode → correlation engine → SQLite group
 * commits (a real file, WAL), over realistic batches (512 spans, as the SDK's BatchSpanProcessor
 * sends) made by the real SDK serializers: forkwatch spans of many sessions (healthy resumes with
 * a seed fork every 50th session) mixed with foreign HTTP spans. The same payloads are also
 * decoded bare, in alternating rounds, so the ratio is measured side by side.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { diag } from '@opentelemetry/api';
import { CorrelationEngine } from '../src/correlate/correlation-engine.js';
import type { SpanRecord } from '../src/model/span-record.js';
import { decodeJson } from '../src/otlp/decode-json.js';
import { decodeProtobuf } from '../src/otlp/decode-protobuf.js';
import { IngestPipeline } from '../src/service/ingest-pipeline.js';
import { openStore } from '../src/storage/open-store.js';
import { healthyResumeScenario, seedScenario } from '../test/fixtures/scenarios/scenarios.js';
import { makeSdkSpans, mixedSpecs, type SpanSpec } from '../test/otlp/sdk-spans.js';

const BATCH = 512;

function specOf(r: SpanRecord): SpanSpec {
  return { name: r.name, attributes: r.attributes, startMs: r.startMs, durationMs: Math.max(0.001, r.endMs - r.startMs) };
}

/** Payloads of `sessions` sessions with `forkwatchRatio` of all spans being forkwatch spans. */
export function makeIngestPayloads(sessions: number, forkwatchRatio: number): { protobuf: Uint8Array[]; json: string[]; spans: number; forkwatchSpans: number } {
  const fw: ReadableSpan[] = [];
  for (let i = 0; i < sessions; i++) {
    const sc = i % 50 === 49 ? seedScenario({ sessionId: `bench-${i}`, t0: 1_764_000_000_000 + i * 10 }) : healthyResumeScenario({ sessionId: `bench-${i}`, t0: 1_764_000_000_000 + i * 10 });
    fw.push(...makeSdkSpans(sc.server.map(specOf), 'mcp-server'), ...makeSdkSpans(sc.client.map(specOf), 'mcp-client'));
  }
  const foreignCount = Math.round((fw.length * (1 - forkwatchRatio)) / forkwatchRatio);
  const foreign = makeSdkSpans(mixedSpecs(foreignCount, 0), 'mcp-server');
  // Interleave as a fleet's exporters would: forkwatch spans spread among foreign ones.
  const all: ReadableSpan[] = [];
  const step = foreign.length / Math.max(1, fw.length);
  let f = 0;
  for (let i = 0; i < fw.length; i++) {
    all.push(fw[i]!);
    const upto = Math.round((i + 1) * step);
    while (f < upto && f < foreign.length) all.push(foreign[f++]!);
  }
  while (f < foreign.length) all.push(foreign[f++]!);
  const protobuf: Uint8Array[] = [];
  const json: string[] = [];
  for (let i = 0; i < all.length; i += BATCH) {
    const batch = all.slice(i, i + BATCH);
    protobuf.push(ProtobufTraceSerializer.serializeRequest(batch)!);
    json.push(Buffer.from(JsonTraceSerializer.serializeRequest(batch)!).toString('utf8'));
  }
  return { protobuf, json, spans: all.length, forkwatchSpans: fw.length };
}

function bareDecode(payloads: Array<Uint8Array | string>, decode: (p: never) => { spans: SpanRecord[] }): number {
  const t0 = performance.now();
  let n = 0;
  for (const p of payloads) n += decode(p as never).spans.length;
  if (n < 0) throw new Error('unreachable');
  return (performance.now() - t0) / 1000;
}

function endToEnd(payloads: Array<Uint8Array | string>, decode: (p: never) => { spans: SpanRecord[] }): { seconds: number; findings: number } {
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
    if (r !== 'overloaded') r.catch(() => undefined);
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
  /** end-to-end rate / bare decode rate, same payloads. */
  ratio: number;
  findings: number;
}

/** Median of `rounds` alternating bare/end-to-end rounds per format. */
export function benchIngest(opts: { sessions?: number; forkwatchRatio?: number; rounds?: number } = {}): IngestBenchResult[] {
  const payloads = makeIngestPayloads(opts.sessions ?? 3000, opts.forkwatchRatio ?? 0.2);
  const rounds = opts.rounds ?? 3;
  const out: IngestBenchResult[] = [];
  for (const format of ['protobuf', 'json'] as const) {
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
    out.push({
      format,
      spans: payloads.spans,
      forkwatchSpans: payloads.forkwatchSpans,
      bareDecodeSpansPerSec: bareRate,
      endToEndSpansPerSec: e2eRate,
      endToEndForkwatchSpansPerSec: payloads.forkwatchSpans / med(e2e),
      ratio: e2eRate / bareRate,
      findings,
    });
  }
  return out;
}
