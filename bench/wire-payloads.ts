/**
 * Payloads of the wire benchmark, shaped as a fleet's OpenTelemetry SDKs send them: each exporter
 * is one process (one resource, a tracer per instrumentation scope) whose BatchSpanProcessor
 * exports its finished spans in end order, 512 per request, serialized by the SDK's own OTLP
 * serializer, so every request repeats its resource and scopes. Spans of one HTTP exchange share
 * a trace id (the forkwatch spans are children of the exchange's HTTP span), and a process's
 * concurrent sessions interleave. Made in a child process, as bench/ingest-payloads.ts explains.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT_CONTEXT, SpanKind, trace, type Attributes, type Context, type Tracer } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { SpanRecord } from '../src/model/span-record.js';
import { healthyResumeScenario, seedScenario } from '../test/fixtures/scenarios/scenarios.js';

/** Request bodies per exporter, in the order each exporter sends them. */
export interface WirePayloads {
  byExporter: Uint8Array[][];
  spans: number;
  forkwatchSpans: number;
  batches: number;
}

/** BatchSpanProcessor's default maxExportBatchSize. */
const BATCH = 512;
/** Sessions a process serves at once: their exchanges interleave in its batches. */
const CONCURRENT_SESSIONS = 16;
// Spans that open an HTTP exchange: the spans after them, up to the next, belong to its trace.
const EXCHANGE_STARTS = new Set(['forkwatch.request.received', 'forkwatch.request.sent', 'forkwatch.resume']);

const HTTP_ATTRS: Attributes = {
  'http.request.method': 'POST',
  'url.path': '/mcp',
  'url.scheme': 'http',
  'server.address': 'mcp.internal.example',
  'server.port': 8080,
  'http.response.status_code': 200,
  'network.protocol.version': '1.1',
  'user_agent.original': 'node-fetch/1.0 (+https://github.com/bitinn/node-fetch)',
  'client.address': '10.0.3.17',
  'http.route': '/mcp',
};
const DB_ATTRS: Attributes = {
  'db.system': 'postgresql',
  'db.namespace': 'tools',
  'db.operation.name': 'SELECT',
  'db.query.text': 'SELECT id, name, payload FROM tool_results WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT 100',
  'server.address': 'pg.internal.example',
  'server.port': 5432,
};

interface Exchange {
  spans: SpanRecord[];
}

function exchangesOf(records: SpanRecord[]): Exchange[] {
  const out: Exchange[] = [];
  for (const r of records) {
    if (out.length === 0 || EXCHANGE_STARTS.has(r.name)) out.push({ spans: [] });
    out[out.length - 1]!.spans.push(r);
  }
  return out;
}

class ExporterProcess {
  readonly exporter = new InMemorySpanExporter();
  readonly fw: Tracer;
  readonly http: Tracer;
  private readonly queue: Exchange[][] = [];

  constructor(
    service: string,
    i: number,
    private readonly side: 'server' | 'client',
  ) {
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({
        'service.name': service,
        'service.version': '1.4.2',
        'service.instance.id': `0b6f2c1e-4d3a-4c8e-9f1a-${String(i).padStart(12, '0')}`,
        'host.name': `ip-10-0-3-${17 + i}.eu-west-1.compute.internal`,
        'process.pid': 4100 + i,
        'process.runtime.name': 'nodejs',
        'process.runtime.version': '20.18.0',
        'telemetry.sdk.language': 'nodejs',
        'telemetry.sdk.name': 'opentelemetry',
        'telemetry.sdk.version': '2.0.1',
      }),
      spanProcessors: [new SimpleSpanProcessor(this.exporter)],
    });
    this.fw = provider.getTracer('@forkwatch/instrumentation', '0.2.0');
    this.http = provider.getTracer('@opentelemetry/instrumentation-http', '0.200.0');
  }

  add(exchanges: Exchange[]): void {
    this.queue.push(exchanges);
  }

  /** Runs the queued sessions, CONCURRENT_SESSIONS at a time, one exchange per turn. */
  run(foreignPerForkwatch: number): void {
    let carry = 0;
    const active: Exchange[][] = [];
    let next = 0;
    while (next < this.queue.length || active.length > 0) {
      while (active.length < CONCURRENT_SESSIONS && next < this.queue.length) active.push([...this.queue[next++]!]);
      for (let i = 0; i < active.length; i++) {
        const ex = active[i]!.shift()!;
        carry += ex.spans.length * foreignPerForkwatch;
        const foreign = Math.floor(carry);
        carry -= foreign;
        this.exchange(ex, foreign);
        if (active[i]!.length === 0) active.splice(i--, 1);
      }
    }
  }

  /** One HTTP exchange: its HTTP span (when foreign spans are wanted) is the parent of all others. */
  private exchange(ex: Exchange, foreign: number): void {
    const first = ex.spans[0]!;
    const last = ex.spans[ex.spans.length - 1]!;
    let ctx: Context = ROOT_CONTEXT;
    let root: ReturnType<Tracer['startSpan']> | undefined;
    if (foreign > 0) {
      root = this.http.startSpan(this.side === 'server' ? 'POST /mcp' : 'POST', { kind: this.side === 'server' ? SpanKind.SERVER : SpanKind.CLIENT, startTime: first.startMs - 1, attributes: HTTP_ATTRS });
      ctx = trace.setSpan(ROOT_CONTEXT, root);
      foreign--;
    }
    const perSpan = Math.ceil(foreign / ex.spans.length);
    for (let i = 0; i < ex.spans.length; i++) {
      const r = ex.spans[i]!;
      const s = this.fw.startSpan(r.name, { kind: SpanKind.INTERNAL, startTime: r.startMs, attributes: r.attributes }, ctx);
      // Without an HTTP span the exchange's first forkwatch span is the others' parent: they still share its trace.
      if (i === 0 && root === undefined) ctx = trace.setSpan(ROOT_CONTEXT, s);
      s.end(Math.max(r.startMs + 0.001, r.endMs));
      for (let k = 0; k < perSpan && foreign > 0; k++, foreign--) {
        const d = this.http.startSpan('pg.query:SELECT tools', { kind: SpanKind.CLIENT, startTime: r.startMs + 0.1, attributes: DB_ATTRS }, ctx);
        d.end(r.startMs + 0.9);
      }
    }
    root?.end(last.endMs + 1);
  }

  batches(): { bodies: Uint8Array[]; spans: number; forkwatch: number } {
    const spans: ReadableSpan[] = this.exporter.getFinishedSpans();
    const bodies: Uint8Array[] = [];
    for (let i = 0; i < spans.length; i += BATCH) bodies.push(ProtobufTraceSerializer.serializeRequest(spans.slice(i, i + BATCH))!);
    return { bodies, spans: spans.length, forkwatch: spans.filter((s) => s.name.startsWith('forkwatch.')).length };
  }
}

/**
 * Payloads of `sessions` sessions from `exporters` processes (half MCP servers, half clients),
 * `forkwatchRatio` of all spans being forkwatch spans.
 */
export function makeWirePayloads(sessions: number, forkwatchRatio: number, exporters: number): WirePayloads {
  const servers = Math.max(1, Math.floor(exporters / 2));
  const clients = Math.max(1, exporters - servers);
  const procs = [
    ...Array.from({ length: servers }, (_, i) => new ExporterProcess('mcp-server', i, 'server')),
    ...Array.from({ length: clients }, (_, i) => new ExporterProcess('mcp-client', servers + i, 'client')),
  ];
  for (let i = 0; i < sessions; i++) {
    const opts = { sessionId: `bench-${i}`, t0: 1_764_000_000_000 + i * 10 };
    const sc = i % 50 === 49 ? seedScenario(opts) : healthyResumeScenario(opts);
    procs[i % servers]!.add(exchangesOf(sc.server));
    procs[servers + (i % clients)]!.add(exchangesOf(sc.client));
  }
  const out: WirePayloads = { byExporter: [], spans: 0, forkwatchSpans: 0, batches: 0 };
  for (const p of procs) {
    p.run((1 - forkwatchRatio) / forkwatchRatio);
    const b = p.batches();
    out.byExporter.push(b.bodies);
    out.spans += b.spans;
    out.forkwatchSpans += b.forkwatch;
    out.batches += b.bodies.length;
  }
  return out;
}

/** {@link makeWirePayloads} run in a child process; same arguments, same result. */
export function loadWirePayloads(sessions: number, forkwatchRatio: number, exporters: number): WirePayloads {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-wire-payloads-'));
  try {
    const out = join(dir, 'payloads.bin');
    // Profiling flags (and a directory given as the next argument) are the measured process's, not this child's.
    const execArgv = process.execArgv.filter((a, i, all) => !/^--(cpu|heap)-prof/.test(a) && !/^--(cpu|heap)-prof-(dir|name)$/.test(all[i - 1] ?? ''));
    const r = spawnSync(process.execPath, [...execArgv, fileURLToPath(import.meta.url), String(sessions), String(forkwatchRatio), String(exporters), out], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`payload child failed: ${r.status ?? r.signal}`);
    return readFrames(readFileSync(out));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Layout: spans, forkwatchSpans, exporters (u32 each); per exporter a count, then length-prefixed bodies.
function writeFrames(p: WirePayloads, path: string): void {
  const u32 = (n: number): Buffer => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    return b;
  };
  const parts: Uint8Array[] = [u32(p.spans), u32(p.forkwatchSpans), u32(p.byExporter.length)];
  for (const bodies of p.byExporter) {
    parts.push(u32(bodies.length));
    for (const b of bodies) parts.push(u32(b.byteLength), b);
  }
  writeFileSync(path, Buffer.concat(parts));
}

function readFrames(b: Buffer): WirePayloads {
  let o = 0;
  const u32 = (): number => {
    const n = b.readUInt32LE(o);
    o += 4;
    return n;
  };
  const spans = u32();
  const forkwatchSpans = u32();
  const byExporter: Uint8Array[][] = [];
  let batches = 0;
  for (let e = u32(); e > 0; e--) {
    const bodies: Uint8Array[] = [];
    for (let n = u32(); n > 0; n--) {
      const len = u32();
      // Copies: each body its own buffer, as each request body would be.
      bodies.push(Buffer.from(b.subarray(o, o + len)));
      o += len;
    }
    batches += bodies.length;
    byExporter.push(bodies);
  }
  return { byExporter, spans, forkwatchSpans, batches };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [sessions, ratio, exporters, out] = process.argv.slice(2);
  writeFrames(makeWirePayloads(Number(sessions), Number(ratio), Number(exporters)), out!);
}
