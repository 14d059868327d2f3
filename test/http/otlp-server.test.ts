import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createGzip, gzipSync } from 'node:zlib';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { FastifyInstance } from 'fastify';
import { createOtlpServer } from '../../src/http/otlp-server.js';
import type { OtlpRequestOutcome, OtlpServerOptions } from '../../src/http/otlp-server.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import type { IngestMeta, IngestSink } from '../../src/otlp/ingest-sink.js';
import { ATTR_SIDE, SPAN_RESUME, SPAN_SSE_EVENT } from '../../packages/instrumentation/src/semconv.js';
import { otlpType } from '../otlp/otlp-reflection.js';
import { makeSdkSpans, serialize, sseEventAttributes } from '../otlp/sdk-spans.js';

const PB = 'application/x-protobuf';

interface Harness {
  url: string;
  app: FastifyInstance;
  offers: Array<{ spans: SpanRecord[]; meta: IngestMeta }>;
  outcomes: OtlpRequestOutcome[];
  close(): Promise<void>;
}

type SinkMode = 'ok' | 'overloaded' | 'throw' | 'reject' | 'hang';

async function start(opts: Partial<OtlpServerOptions> = {}, mode: SinkMode = 'ok'): Promise<Harness> {
  const offers: Harness['offers'] = [];
  const outcomes: OtlpRequestOutcome[] = [];
  const sink: IngestSink = {
    offer(spans, meta) {
      if (mode === 'overloaded') return 'overloaded';
      if (mode === 'throw') throw new Error('sink broke');
      if (mode === 'reject') return Promise.reject(new Error('queue closed'));
      if (mode === 'hang') return new Promise<void>(() => {});
      offers.push({ spans, meta });
      return Promise.resolve();
    },
  };
  const app = await createOtlpServer({ sink, onRequest: (o) => outcomes.push(o), ...opts });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url: `${address}/v1/traces`, app, offers, outcomes, close: () => app.close() };
}

function sample(): { spans: ReadableSpan[]; protobuf: Uint8Array; json: string } {
  const spans = makeSdkSpans([
    { name: SPAN_SSE_EVENT, attributes: sseEventAttributes(1) },
    { name: SPAN_RESUME, attributes: { [ATTR_SIDE]: 'client' } },
    { name: 'GET /mcp', attributes: { 'http.route': '/mcp' } },
  ]);
  return { spans, ...serialize(spans) };
}

async function post(url: string, body: Uint8Array | string, headers: Record<string, string>): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(10_000) });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

const rpcStatus = (b: Buffer) => otlpType('RpcStatus').toObject(otlpType('RpcStatus').decode(b)) as { code: number; message: string };

test('200 for protobuf, JSON (with charset) and gzip; spans reach the sink', async (t) => {
  const h = await start();
  t.after(() => h.close());
  const { protobuf, json } = sample();

  const r1 = await post(h.url, protobuf, { 'content-type': PB });
  assert.equal(r1.status, 200);
  assert.equal(r1.headers.get('content-type'), PB);
  assert.equal(r1.body.length, 0);

  const r2 = await post(h.url, json, { 'content-type': 'application/json; charset=utf-8' });
  assert.equal(r2.status, 200);
  assert.equal(r2.body.toString(), '{}');

  const r3 = await post(h.url, gzipSync(protobuf), { 'content-type': PB, 'content-encoding': 'gzip' });
  assert.equal(r3.status, 200);

  assert.equal(h.offers.length, 3);
  for (const o of h.offers) {
    assert.deepEqual(o.spans.map((s) => s.name).sort(), [SPAN_RESUME, SPAN_SSE_EVENT]);
    assert.deepEqual(o.meta, { received: 3, foreign: 1, rejected: 0, rejectReasons: {} });
  }
  assert.deepEqual(h.offers[0]!.spans, h.offers[1]!.spans);
  assert.deepEqual(h.outcomes, Array(3).fill({ status: 200, spans: 2, rejected: 0, foreign: 1 }));
});

test('200 with partial_success when forkwatch spans are rejected; foreign-only batches skip the sink', async (t) => {
  const h = await start();
  t.after(() => h.close());
  const bad = serialize(
    makeSdkSpans([{ name: SPAN_SSE_EVENT, attributes: {} }, { name: SPAN_SSE_EVENT, attributes: sseEventAttributes(2) }]),
  );
  const r = await post(h.url, bad.protobuf, { 'content-type': PB });
  assert.equal(r.status, 200);
  const resp = otlpType('ExportTraceServiceResponse');
  assert.deepEqual(resp.toObject(resp.decode(r.body), { longs: String }), {
    partialSuccess: { rejectedSpans: '1', errorMessage: '1 forkwatch span rejected: invalid_side=1' },
  });
  const rj = await post(h.url, bad.json, { 'content-type': 'application/json' });
  assert.deepEqual(JSON.parse(rj.body.toString()), {
    partialSuccess: { rejectedSpans: '1', errorMessage: '1 forkwatch span rejected: invalid_side=1' },
  });
  assert.deepEqual(h.outcomes[0], { status: 200, reason: 'invalid_span', spans: 1, rejected: 1, foreign: 0 });

  const foreign = serialize(makeSdkSpans([{ name: 'GET /' }]));
  const rf = await post(h.url, foreign.protobuf, { 'content-type': PB });
  assert.equal(rf.status, 200);
  assert.equal(h.offers.length, 2);
  assert.deepEqual(h.outcomes[2], { status: 200, spans: 0, rejected: 0, foreign: 1 });
});

test('400 for undecodable bodies, answered in the request format', async (t) => {
  const h = await start();
  t.after(() => h.close());
  const { protobuf } = sample();
  const r1 = await post(h.url, protobuf.subarray(0, protobuf.length - 3), { 'content-type': PB });
  assert.equal(r1.status, 400);
  assert.equal(r1.headers.get('content-type'), PB);
  const st = rpcStatus(r1.body);
  assert.equal(st.code, 3);
  assert.match(st.message, /^FORKWATCH_ERR_OTLP_DECODE: cannot decode OTLP payload/);

  const r2 = await post(h.url, '{"resourceSpans": [', { 'content-type': 'application/json' });
  assert.equal(r2.status, 400);
  const j = JSON.parse(r2.body.toString());
  assert.equal(j.error, 'FORKWATCH_ERR_OTLP_DECODE');
  assert.equal(j.code, 3);

  const r3 = await post(h.url, Buffer.from('not gzip at all'), { 'content-type': PB, 'content-encoding': 'gzip' });
  assert.equal(r3.status, 400);
  assert.match(rpcStatus(r3.body).message, /^FORKWATCH_ERR_BAD_GZIP/);
  assert.deepEqual(
    h.outcomes.map((o) => [o.status, o.reason]),
    [
      [400, 'decode_error'],
      [400, 'decode_error'],
      [400, 'decode_error'],
    ],
  );
  assert.equal(h.offers.length, 0);
});

test('401 without the bearer token, checked before content type and size', async (t) => {
  const h = await start({ authToken: 's3cret', maxBodyBytes: 64 });
  t.after(() => h.close());
  const { protobuf } = sample();
  for (const auth of [undefined, 'Bearer wrong', 'Bearer s3cret2', 'Basic s3cret', 'Bearer ']) {
    const headers: Record<string, string> = { 'content-type': 'text/plain' };
    if (auth !== undefined) headers.authorization = auth;
    const r = await post(h.url, Buffer.alloc(1000), headers);
    assert.equal(r.status, 401, String(auth));
    assert.equal(JSON.parse(r.body.toString()).error, 'FORKWATCH_ERR_UNAUTHORIZED');
  }
  const ok = await start({ authToken: 's3cret' });
  t.after(() => ok.close());
  assert.equal((await post(ok.url, protobuf, { 'content-type': PB, authorization: 'Bearer s3cret' })).status, 200);
  assert.equal(h.outcomes.every((o) => o.status === 401 && o.reason === 'unauthorized'), true);
});

test('413 over maxBodyBytes (with and without content-length) and for a 100 MB gzip bomb', async (t) => {
  const h = await start({ maxBodyBytes: 1024 });
  t.after(() => h.close());
  const r1 = await post(h.url, Buffer.alloc(2048, 1), { 'content-type': PB });
  assert.equal(r1.status, 413);
  assert.match(rpcStatus(r1.body).message, /^FORKWATCH_ERR_BODY_TOO_LARGE/);

  // Chunked: no content-length, the limit applies while reading.
  const chunk = new Uint8Array(512);
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < 8; i++) c.enqueue(chunk);
      c.close();
    },
  });
  const res = await fetch(h.url, {
    method: 'POST',
    body: stream,
    headers: { 'content-type': 'application/json' },
    duplex: 'half',
    signal: AbortSignal.timeout(10_000),
  } as RequestInit);
  assert.equal(res.status, 413);
  assert.equal(((await res.json()) as { error: string }).error, 'FORKWATCH_ERR_BODY_TOO_LARGE');

  const big = await start(); // default limits: 4 MiB body, 16 MiB inflated
  t.after(() => big.close());
  const bomb = await gzipZeros(100 * 1024 * 1024);
  assert.ok(bomb.length < 4 * 1024 * 1024);
  const t0 = performance.now();
  const r2 = await post(big.url, bomb, { 'content-type': PB, 'content-encoding': 'gzip' });
  const ms = performance.now() - t0;
  assert.equal(r2.status, 413);
  assert.match(rpcStatus(r2.body).message, /^FORKWATCH_ERR_DECOMPRESSED_TOO_LARGE/);
  assert.ok(ms < 3000, `took ${ms} ms`);
  assert.deepEqual(
    [...h.outcomes, ...big.outcomes].map((o) => [o.status, o.reason]),
    [
      [413, 'too_large'],
      [413, 'too_large'],
      [413, 'too_large'],
    ],
  );
});

test('415 for other content types and encodings', async (t) => {
  const h = await start();
  t.after(() => h.close());
  const { protobuf } = sample();
  for (const ct of ['text/plain', 'application/grpc', 'application/x-protobuffer']) {
    const r = await post(h.url, protobuf, { 'content-type': ct });
    assert.equal(r.status, 415, ct);
    assert.equal(JSON.parse(r.body.toString()).error, 'FORKWATCH_ERR_UNSUPPORTED_MEDIA_TYPE');
  }
  const r = await post(h.url, protobuf, { 'content-type': PB, 'content-encoding': 'br' });
  assert.equal(r.status, 415);
  assert.match(rpcStatus(r.body).message, /^FORKWATCH_ERR_UNSUPPORTED_ENCODING/);
  assert.equal((await post(h.url, protobuf, { 'content-type': PB, 'content-encoding': 'identity' })).status, 200);
  assert.ok(h.outcomes.slice(0, 4).every((o) => o.status === 415 && o.reason === 'unsupported_media_type'));
});

test('503 with Retry-After when the sink is overloaded, throws or fails', async (t) => {
  const { protobuf, json } = sample();
  for (const mode of ['overloaded', 'throw', 'reject', 'hang'] as const) {
    const h = await start({ retryAfterSeconds: 7, sinkTimeoutMs: 50 }, mode);
    t.after(() => h.close());
    const r = await post(h.url, protobuf, { 'content-type': PB });
    assert.equal(r.status, 503, mode);
    assert.equal(r.headers.get('retry-after'), '7');
    const st = rpcStatus(r.body);
    assert.equal(st.code, 14);
    assert.match(st.message, /^FORKWATCH_ERR_OVERLOADED/);
    const rj = await post(h.url, json, { 'content-type': 'application/json' });
    assert.equal(rj.status, 503);
    assert.equal(rj.headers.get('retry-after'), '7');
    assert.deepEqual(h.outcomes[0], { status: 503, reason: 'overloaded', spans: 0, rejected: 2, foreign: 1 });
  }
  const d = await start({}, 'overloaded');
  t.after(() => d.close());
  assert.equal((await post(d.url, protobuf, { 'content-type': PB })).headers.get('retry-after'), '2');
});

test('end to end: the real OTLP proto and JSON exporters export to the receiver', async (t) => {
  const h = await start({ authToken: 'tok' });
  t.after(() => h.close());
  const { spans } = sample();
  const exporters = [
    new ProtoExporter({ url: h.url, headers: { authorization: 'Bearer tok' } }),
    new ProtoExporter({ url: h.url, headers: { authorization: 'Bearer tok' }, compression: CompressionAlgorithm.GZIP }),
    new JsonExporter({ url: h.url, headers: { authorization: 'Bearer tok' } }),
    new JsonExporter({ url: h.url, headers: { authorization: 'Bearer tok' }, compression: CompressionAlgorithm.GZIP }),
  ];
  for (const ex of exporters) {
    const result = await new Promise<{ code: number; error?: Error }>((resolve) => ex.export(spans, resolve));
    assert.equal(result.code, 0, String(result.error));
    await ex.shutdown();
  }
  assert.equal(h.offers.length, 4);
  for (const o of h.offers) assert.deepEqual(o.spans, h.offers[0]!.spans);
  const ev = h.offers[0]!.spans.find((s) => s.name === SPAN_SSE_EVENT)!;
  assert.equal(ev.traceId, spans[0]!.spanContext().traceId);
  assert.equal(ev.service, 'mcp-server');

  // A wrong token: the exporter reports failure rather than success.
  const bad = new ProtoExporter({ url: h.url, headers: { authorization: 'Bearer nope' } });
  const r = await new Promise<{ code: number }>((resolve) => bad.export(spans, resolve));
  assert.equal(r.code, 1);
  await bad.shutdown();
});

/** gzip of `n` zero bytes, streamed so the test itself never holds `n` bytes. */
function gzipZeros(n: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const gz = createGzip({ level: 9 });
    const out: Buffer[] = [];
    gz.on('data', (c: Buffer) => out.push(c));
    gz.on('end', () => resolve(Buffer.concat(out)));
    gz.on('error', reject);
    const zeros = Buffer.alloc(1024 * 1024);
    let left = n;
    const pump = (): void => {
      while (left > 0) {
        left -= zeros.length;
        if (!gz.write(zeros)) {
          gz.once('drain', pump);
          return;
        }
      }
      gz.end();
    };
    pump();
  });
}
