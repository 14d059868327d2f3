import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { Metadata, credentials, makeGenericClientConstructor, status } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { ExportResultCode } from '@opentelemetry/core';
import { createOtlpGrpcServer, TRACE_EXPORT_PATH } from '../../../src/otlp/grpc/otlp-grpc-server.js';
import type { OtlpGrpcServerOptions } from '../../../src/otlp/grpc/otlp-grpc-server.js';
import { decodeRetryDelaySeconds, GRPC_STATUS_DETAILS_KEY } from '../../../src/otlp/grpc/grpc-status-details.js';
import type { OtlpRequestOutcome } from '../../../src/http/otlp-server.js';
import type { SpanRecord } from '../../../src/model/span-record.js';
import type { IngestSink } from '../../../src/otlp/ingest-sink.js';
import { ATTR_SIDE, SPAN_RESUME, SPAN_SSE_EVENT } from '../../../packages/instrumentation/src/semconv.js';
import { makeSdkSpans, serialize, sseEventAttributes } from '../sdk-spans.js';

type SinkMode = 'ok' | 'overloaded' | 'throw' | 'hang';

async function start(opts: Partial<OtlpGrpcServerOptions> = {}, mode: SinkMode = 'ok') {
  const offers: SpanRecord[][] = [];
  const outcomes: OtlpRequestOutcome[] = [];
  const sink: IngestSink = {
    offer(spans) {
      if (mode === 'overloaded') return 'overloaded';
      if (mode === 'throw') throw new Error('sink broke');
      if (mode === 'hang') return new Promise<void>(() => {});
      offers.push(spans);
      return Promise.resolve();
    },
  };
  const server = createOtlpGrpcServer({ sink, onRequest: (o) => outcomes.push(o), ...opts });
  const port = await server.listen('127.0.0.1', 0);
  return { address: `127.0.0.1:${port}`, offers, outcomes, close: () => server.close() };
}

// A raw client with passthrough bytes, so the test sees exactly what the server answers.
const RawClient = makeGenericClientConstructor(
  {
    Export: {
      path: TRACE_EXPORT_PATH,
      requestStream: false,
      responseStream: false,
      requestSerialize: (b: Buffer) => b,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (b: Buffer) => b,
      responseDeserialize: (b: Buffer) => b,
    },
  },
  'TraceService',
);

function call(address: string, body: Uint8Array, md: Record<string, string> = {}, gzip = false): Promise<{ err: ServiceError | null; res?: Buffer }> {
  const client = new RawClient(address, credentials.createInsecure(), gzip ? { 'grpc.default_compression_algorithm': 2 } : {});
  const metadata = new Metadata();
  for (const [k, v] of Object.entries(md)) metadata.set(k, v);
  return new Promise((resolve) => {
    (client as unknown as { Export: Function }).Export(Buffer.from(body), metadata, { deadline: Date.now() + 10_000 }, (err: ServiceError | null, res?: Buffer) => {
      client.close();
      resolve({ err, res });
    });
  });
}

function sample(): Uint8Array {
  return serialize(
    makeSdkSpans([
      { name: SPAN_SSE_EVENT, attributes: sseEventAttributes(1) },
      { name: SPAN_RESUME, attributes: { [ATTR_SIDE]: 'client' } },
      { name: 'GET /mcp', attributes: { 'http.route': '/mcp' } },
    ]),
  ).protobuf;
}

test('Export: forkwatch spans reach the sink, foreign ones are skipped, the answer is an empty response', async () => {
  const h = await start();
  try {
    const { err, res } = await call(h.address, sample());
    assert.equal(err, null);
    assert.equal(res!.length, 0);
    assert.equal(h.offers.length, 1);
    assert.deepEqual(h.offers[0]!.map((s) => s.name), [SPAN_SSE_EVENT, SPAN_RESUME]);
    assert.deepEqual(h.outcomes, [{ status: 200, spans: 2, rejected: 0, foreign: 1 }]);
  } finally {
    await h.close();
  }
});

test('Export: a gzip-compressed call and the real OpenTelemetry gRPC exporter are both accepted', async () => {
  const h = await start();
  try {
    assert.equal((await call(h.address, sample(), {}, true)).err, null);
    const exporter = new GrpcExporter({ url: `http://${h.address}`, compression: 'gzip' as never });
    const spans = makeSdkSpans([{ name: SPAN_SSE_EVENT, attributes: sseEventAttributes(7) }]);
    const code = await new Promise<number>((resolve) => exporter.export(spans, (r) => resolve(r.code)));
    await exporter.shutdown();
    assert.equal(code, ExportResultCode.SUCCESS);
    assert.equal(h.offers.length, 2);
  } finally {
    await h.close();
  }
});

test('Export: rejected forkwatch spans come back as partial_success', async () => {
  const h = await start();
  try {
    const bad = serialize(makeSdkSpans([{ name: SPAN_SSE_EVENT, attributes: { ...sseEventAttributes(1), [ATTR_SIDE]: 'sideways' } }, { name: SPAN_SSE_EVENT, attributes: sseEventAttributes(2) }])).protobuf;
    const { err, res } = await call(h.address, bad);
    assert.equal(err, null);
    // ExportTraceServiceResponse{partial_success(1){rejected_spans(1)=1, error_message(2)}}
    assert.equal(res![0], 0x0a);
    assert.equal(res![2], 0x08);
    assert.equal(res![3], 1);
    assert.match(res!.toString('latin1'), /invalid_side=1/);
    assert.equal(h.outcomes[0]!.reason, 'invalid_span');
  } finally {
    await h.close();
  }
});

test('Export: a bearer token is required when set, in the authorization metadata', async () => {
  const h = await start({ authToken: 's3cret' });
  try {
    assert.equal((await call(h.address, sample())).err?.code, status.UNAUTHENTICATED);
    assert.equal((await call(h.address, sample(), { authorization: 'Bearer nope' })).err?.code, status.UNAUTHENTICATED);
    assert.equal((await call(h.address, sample(), { authorization: 'Bearer s3cret' })).err, null);
    assert.equal(h.offers.length, 1);
    assert.equal(h.outcomes[0]!.status, 401);
  } finally {
    await h.close();
  }
});

test('Export: overload is UNAVAILABLE with RetryInfo in grpc-status-details-bin; a failing sink too', async () => {
  for (const mode of ['overloaded', 'throw'] as const) {
    const h = await start({ retryAfterSeconds: 3 }, mode);
    try {
      const { err } = await call(h.address, sample());
      assert.equal(err?.code, status.UNAVAILABLE, mode);
      const details = err!.metadata.get(GRPC_STATUS_DETAILS_KEY)[0];
      assert.ok(Buffer.isBuffer(details), `${mode}: no ${GRPC_STATUS_DETAILS_KEY}`);
      assert.equal(decodeRetryDelaySeconds(details), 3);
      assert.deepEqual(h.outcomes[0], { status: 503, reason: 'overloaded', spans: 0, rejected: 2, foreign: 1 });
    } finally {
      await h.close();
    }
  }
});

test('Export: a sink that never settles is answered UNAVAILABLE after sinkTimeoutMs', async () => {
  const h = await start({ sinkTimeoutMs: 200 }, 'hang');
  try {
    assert.equal((await call(h.address, sample())).err?.code, status.UNAVAILABLE);
  } finally {
    await h.close();
  }
});

test('Export: undecodable bytes are INVALID_ARGUMENT; over the limits RESOURCE_EXHAUSTED without retry info', async () => {
  const h = await start({ maxBodyBytes: 2048, maxDecompressedBytes: 8192 });
  try {
    const garbage = await call(h.address, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]));
    assert.equal(garbage.err?.code, status.INVALID_ARGUMENT);
    assert.match(garbage.err!.details, /FORKWATCH_ERR_OTLP_DECODE/);
    // 4 KiB as sent: over maxBodyBytes.
    const big = Buffer.concat([Buffer.from([0x0a, 0x80, 0x20]), Buffer.alloc(4096)]);
    const tooLarge = await call(h.address, big);
    assert.equal(tooLarge.err?.code, status.RESOURCE_EXHAUSTED);
    assert.equal(tooLarge.err!.metadata.get(GRPC_STATUS_DETAILS_KEY).length, 0);
    // Compressed it is small, but it inflates past maxDecompressedBytes: grpc-js stops there.
    const bomb = Buffer.concat([Buffer.from([0x0a, 0x80, 0x80, 0x01]), Buffer.alloc(16384)]);
    assert.ok(gzipSync(bomb).length < 2048);
    assert.equal((await call(h.address, bomb, {}, true)).err?.code, status.RESOURCE_EXHAUSTED);
    assert.equal(h.offers.length, 0);
  } finally {
    await h.close();
  }
});

test('close: a call in flight finishes before close resolves; later calls are refused', async () => {
  let release: () => void = () => {};
  const held = new Promise<void>((r) => (release = r));
  const server = createOtlpGrpcServer({ sink: { offer: () => held } });
  const port = await server.listen('127.0.0.1', 0);
  const inFlight = call(`127.0.0.1:${port}`, sample());
  await new Promise((r) => setTimeout(r, 200));
  let closed = false;
  const closing = server.close().then(() => (closed = true));
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(closed, false, 'close resolved while a call was in flight');
  release();
  assert.equal((await inFlight).err, null);
  await closing;
  assert.notEqual((await call(`127.0.0.1:${port}`, sample())).err, null);
});
