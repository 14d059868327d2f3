import type { ErrorCode } from '../errors.js';

/** The body format of an OTLP/HTTP exchange; answers use the format of the request. */
export type OtlpFormat = 'protobuf' | 'json';

/** What the receiver tells the exporter about a batch it accepted. */
export interface ExportOutcome {
  /** Spans of the batch that were not ingested (OTLP `partial_success.rejected_spans`). */
  rejectedSpans: number;
  /** Why, when `rejectedSpans > 0`. */
  errorMessage?: string;
}

/**
 * Encodes an `ExportTraceServiceResponse`: empty when nothing was rejected, else with
 * `partial_success{rejected_spans=1, error_message=2}` (field 1 of the response).
 */
export function encodeExportResponse(format: OtlpFormat, outcome: ExportOutcome): Uint8Array {
  const rejected = Math.max(0, Math.trunc(outcome.rejectedSpans));
  const message = outcome.errorMessage ?? '';
  if (format === 'json') {
    if (rejected === 0 && message === '') return Buffer.from('{}');
    const ps: Record<string, string> = { rejectedSpans: String(rejected) };
    if (message !== '') ps.errorMessage = message;
    return Buffer.from(JSON.stringify({ partialSuccess: ps }));
  }
  if (rejected === 0 && message === '') return new Uint8Array(0);
  const w = new ProtoWriter();
  if (rejected > 0) w.varintField(1, rejected);
  if (message !== '') w.bytesField(2, Buffer.from(message));
  const inner = w.finish();
  const outer = new ProtoWriter();
  outer.bytesField(1, inner);
  return outer.finish();
}

/** gRPC status codes used in OTLP error bodies, by HTTP status. */
const GRPC_CODE_BY_HTTP: Record<number, number> = {
  400: 3, // INVALID_ARGUMENT
  401: 16, // UNAUTHENTICATED
  413: 8, // RESOURCE_EXHAUSTED
  415: 3, // INVALID_ARGUMENT
  429: 8, // RESOURCE_EXHAUSTED
  503: 14, // UNAVAILABLE
};

/**
 * Encodes an OTLP error body: `google.rpc.Status{code=1 int32 (gRPC code), message=2}` for
 * protobuf; for JSON the same Status plus our error code as `error` and the HTTP `statusCode`
 * (the Status `code` must stay the gRPC integer for OTLP clients). The protobuf message is
 * prefixed with our code so it survives in exporter logs.
 */
export function encodeErrorResponse(format: OtlpFormat, httpStatus: number, code: ErrorCode, message: string): Uint8Array {
  const grpc = GRPC_CODE_BY_HTTP[httpStatus] ?? (httpStatus >= 500 ? 14 : 3);
  if (format === 'json') {
    return Buffer.from(JSON.stringify({ code: grpc, message, error: code, statusCode: httpStatus }));
  }
  const w = new ProtoWriter();
  w.varintField(1, grpc);
  w.bytesField(2, Buffer.from(`${code}: ${message}`));
  return w.finish();
}

/** Just enough protobuf writing for the two small response messages above. */
class ProtoWriter {
  private readonly parts: number[] = [];
  private readonly chunks: Uint8Array[] = [];

  varintField(field: number, value: number): void {
    this.varint((field << 3) | 0);
    this.varint(value);
  }

  bytesField(field: number, bytes: Uint8Array): void {
    this.varint((field << 3) | 2);
    this.varint(bytes.length);
    this.flush();
    this.chunks.push(bytes);
  }

  finish(): Uint8Array {
    this.flush();
    return Buffer.concat(this.chunks);
  }

  private varint(v: number): void {
    // Non-negative and below 2^53: emit 7 bits at a time without 32-bit truncation.
    while (v >= 0x80) {
      this.parts.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.parts.push(v);
  }

  private flush(): void {
    if (this.parts.length > 0) {
      this.chunks.push(Uint8Array.from(this.parts));
      this.parts.length = 0;
    }
  }
}
