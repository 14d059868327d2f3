/**
 * Payloads of the ingest benchmark, made in a child process: the SDK spans they are made from
 * (hundreds of MB that the fixture code does not release) then never sit in the measured
 * process's heap, where every major GC would mark them and tax the engine's allocations far more
 * than bare decoding. Payloads come back as bytes, as an OTLP receiver gets them.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { SpanRecord } from '../src/model/span-record.js';
import { healthyResumeScenario, seedScenario } from '../test/fixtures/scenarios/scenarios.js';
import { makeSdkSpans, mixedSpecs, type SpanSpec } from '../test/otlp/sdk-spans.js';

/** OTLP request bodies, protobuf and JSON (UTF-8 bytes), of the same spans. */
export interface IngestPayloads {
  protobuf: Uint8Array[];
  json: Uint8Array[];
  spans: number;
  forkwatchSpans: number;
}

const BATCH = 512;

function specOf(r: SpanRecord): SpanSpec {
  return { name: r.name, attributes: r.attributes, startMs: r.startMs, durationMs: Math.max(0.001, r.endMs - r.startMs) };
}

/** Payloads of `sessions` sessions with `forkwatchRatio` of all spans being forkwatch spans. */
export function makeIngestPayloads(sessions: number, forkwatchRatio: number): IngestPayloads {
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
  const json: Uint8Array[] = [];
  for (let i = 0; i < all.length; i += BATCH) {
    const batch = all.slice(i, i + BATCH);
    protobuf.push(ProtobufTraceSerializer.serializeRequest(batch)!);
    json.push(JsonTraceSerializer.serializeRequest(batch)!);
  }
  return { protobuf, json, spans: all.length, forkwatchSpans: fw.length };
}


/** {@link makeIngestPayloads} run in a child process; same arguments, same result. */
export function loadIngestPayloads(sessions: number, forkwatchRatio: number): IngestPayloads {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-payloads-'));
  try {
    const out = join(dir, 'payloads.bin');
    const execArgv = process.execArgv.filter((a) => !a.startsWith('--cpu-prof') && !a.startsWith('--heap-prof'));
    const r = spawnSync(process.execPath, [...execArgv, fileURLToPath(import.meta.url), String(sessions), String(forkwatchRatio), out], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`payload child failed: ${r.status ?? r.signal}`);
    return readFrames(readFileSync(out));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Layout: spans, forkwatchSpans, count (u32 each), then count x (protobuf, json) length-prefixed. */
function writeFrames(p: IngestPayloads, path: string): void {
  const parts: Uint8Array[] = [];
  const u32 = (n: number): Buffer => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    return b;
  };
  parts.push(u32(p.spans), u32(p.forkwatchSpans), u32(p.protobuf.length));
  for (let i = 0; i < p.protobuf.length; i++) {
    parts.push(u32(p.protobuf[i]!.byteLength), p.protobuf[i]!, u32(p.json[i]!.byteLength), p.json[i]!);
  }
  writeFileSync(path, Buffer.concat(parts));
}

function readFrames(b: Buffer): IngestPayloads {
  let o = 0;
  const u32 = (): number => {
    const n = b.readUInt32LE(o);
    o += 4;
    return n;
  };
  // Copies: each payload its own buffer, as each request body would be.
  const bytes = (): Uint8Array => {
    const n = u32();
    const c = Buffer.from(b.subarray(o, o + n));
    o += n;
    return c;
  };
  const spans = u32();
  const forkwatchSpans = u32();
  const count = u32();
  const protobuf: Uint8Array[] = [];
  const json: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    protobuf.push(bytes());
    json.push(bytes());
  }
  return { protobuf, json, spans, forkwatchSpans };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [sessions, ratio, out] = process.argv.slice(2);
  writeFrames(makeIngestPayloads(Number(sessions), Number(ratio)), out!);
}
