import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { encodeErrorResponse, encodeExportResponse } from '../../src/otlp/export-response.js';
import { otlpType } from './otlp-reflection.js';

test('protobuf ExportTraceServiceResponse: empty when all accepted, partial_success otherwise', () => {
  assert.equal(encodeExportResponse('protobuf', { rejectedSpans: 0 }).length, 0);
  const bytes = encodeExportResponse('protobuf', { rejectedSpans: 300, errorMessage: '300 forkwatch spans rejected: invalid_side=300' });
  const decoded = otlpType('ExportTraceServiceResponse').toObject(otlpType('ExportTraceServiceResponse').decode(bytes), { longs: String });
  assert.deepEqual(decoded, { partialSuccess: { rejectedSpans: '300', errorMessage: '300 forkwatch spans rejected: invalid_side=300' } });
  // The SDK's own response reader agrees.
  const sdk = ProtobufTraceSerializer.deserializeResponse(bytes);
  assert.equal(Number(sdk.partialSuccess?.rejectedSpans), 300);
});

test('JSON ExportTraceServiceResponse', () => {
  assert.equal(Buffer.from(encodeExportResponse('json', { rejectedSpans: 0 })).toString(), '{}');
  assert.deepEqual(JSON.parse(Buffer.from(encodeExportResponse('json', { rejectedSpans: 2, errorMessage: 'm' })).toString()), {
    partialSuccess: { rejectedSpans: '2', errorMessage: 'm' },
  });
});

test('error bodies: google.rpc.Status for protobuf, Status plus our code for JSON', () => {
  const pb = encodeErrorResponse('protobuf', 400, 'FORKWATCH_ERR_OTLP_DECODE', 'cannot decode');
  assert.deepEqual(otlpType('RpcStatus').toObject(otlpType('RpcStatus').decode(pb)), {
    code: 3,
    message: 'FORKWATCH_ERR_OTLP_DECODE: cannot decode',
  });
  const js = JSON.parse(Buffer.from(encodeErrorResponse('json', 503, 'FORKWATCH_ERR_OVERLOADED', 'full')).toString());
  assert.deepEqual(js, { code: 14, message: 'full', error: 'FORKWATCH_ERR_OVERLOADED', statusCode: 503 });
});
