import { createHash, timingSafeEqual } from 'node:crypto';
import { Metadata, Server, ServerCredentials, status } from '@grpc/grpc-js';
import type { ServerUnaryCall, ServiceDefinition, sendUnaryData } from '@grpc/grpc-js';
import { ForkwatchError } from '../../errors.js';
import type { OtlpRefusalReason, OtlpRequestOutcome } from '../../http/otlp-server.js';
import { decodeProtobuf } from '../decode-protobuf.js';
import type { DecodeLimits } from '../decode-limits.js';
import { countsOf, type DecodeResult, type DecodedCounts } from '../decode-result.js';
import { encodeExportResponse } from '../export-response.js';
import type { IngestSink } from '../ingest-sink.js';
import type { IngestBudget } from '../ingest-budget.js';
import { settleWithin } from '../settle-within.js';
import { GRPC_STATUS_DETAILS_KEY, encodeRetryStatus } from './grpc-status-details.js';

/** The OTLP trace export method, as the Collector's OTLP exporter calls it. */
export const TRACE_EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

export interface OtlpGrpcServerOptions {
  /** Where decoded forkwatch spans go (the same sink as the HTTP receiver's). Required. */
  sink: IngestSink;
  /** When set, calls need `authorization: Bearer <authToken>` metadata. Default: unset. */
  authToken?: string;
  /** Largest uncompressed message accepted as sent, bytes (as the HTTP body limit). Default 4 MiB. */
  maxBodyBytes?: number;
  /** Largest message after gzip inflation, bytes; grpc-js stops inflating there. Default 16 MiB. */
  maxDecompressedBytes?: number;
  /** Retry delay in the `RetryInfo` of overload answers, seconds. Default 2. */
  retryAfterSeconds?: number;
  /** How long a sink's promise may take before the call is answered UNAVAILABLE, ms. Default 10000. */
  sinkTimeoutMs?: number;
  /** Overrides of the decoder's bounds. */
  decodeLimits?: Partial<DecodeLimits>;
  /**
   * The bytes-in-flight budget shared with the HTTP receiver: a message past it is answered
   * UNAVAILABLE with RetryInfo before it is decoded. Default: none (grpc-js's message limit only).
   */
  budget?: IngestBudget;
  /**
   * Called once per call with its outcome, `status` being the HTTP receiver's status for the same
   * case (200, 400, 401, 413, 503), so `forkwatch_otlp_requests_total{code}` reads the same for both.
   */
  onRequest?: (outcome: OtlpRequestOutcome) => void;
  /** Where a throwing hook or sink is reported. Default: ignored. */
  onError?: (message: string, err: unknown) => void;
}

/** Defaults of {@link OtlpGrpcServerOptions}; the same numbers as the HTTP receiver's. */
export const DEFAULT_OTLP_GRPC_OPTIONS = Object.freeze({
  maxBodyBytes: 4 * 1024 * 1024, // bytes
  maxDecompressedBytes: 16 * 1024 * 1024, // bytes
  retryAfterSeconds: 2, // seconds
  sinkTimeoutMs: 10_000, // milliseconds
});

export interface OtlpGrpcServer {
  /** Binds `host:port` (0 = ephemeral); resolves the bound port. */
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting calls, waits for those in flight (their batches reach the sink), then resolves. */
  close(): Promise<void>;
}

// Passthrough (de)serializers: the request's bytes go to decodeProtobuf as they are, and the
// response is already encoded, so no protobuf runtime is loaded for the gRPC path.
const identity = (b: Buffer): Buffer => b;
// An empty ExportTraceServiceResponse: the answer to nearly every call, encoded once.
const EMPTY_RESPONSE = Buffer.alloc(0);
const TRACE_SERVICE: ServiceDefinition = {
  Export: {
    path: TRACE_EXPORT_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};

interface Refusal {
  code: status;
  message: string;
  reason: OtlpRefusalReason;
  httpStatus: number;
  retry?: boolean;
}

/**
 * Builds the OTLP/gRPC receiver: `TraceService/Export` with the same limits, auth, partial
 * success and overload answers as the HTTP receiver, in gRPC status terms: UNAUTHENTICATED,
 * INVALID_ARGUMENT (undecodable), RESOURCE_EXHAUSTED without retry info (too large: permanent),
 * UNAVAILABLE with `RetryInfo` (overloaded, or the sink failed: retry).
 */
export function createOtlpGrpcServer(options: OtlpGrpcServerOptions): OtlpGrpcServer {
  const maxBodyBytes = positive(options.maxBodyBytes, DEFAULT_OTLP_GRPC_OPTIONS.maxBodyBytes);
  const maxDecompressedBytes = Math.max(maxBodyBytes, positive(options.maxDecompressedBytes, DEFAULT_OTLP_GRPC_OPTIONS.maxDecompressedBytes));
  const retryAfter = positive(options.retryAfterSeconds, DEFAULT_OTLP_GRPC_OPTIONS.retryAfterSeconds);
  const sinkTimeoutMs = positive(options.sinkTimeoutMs, DEFAULT_OTLP_GRPC_OPTIONS.sinkTimeoutMs);
  const { sink, decodeLimits, onRequest, onError } = options;
  const tokenDigest = options.authToken ? sha256(options.authToken) : undefined;

  // grpc-js applies one limit to a message both as framed and after inflation; the larger bound
  // goes there and the as-sent bound is checked below for uncompressed calls.
  const server = new Server({
    'grpc.max_receive_message_length': maxDecompressedBytes,
    'grpc.max_send_message_length': 64 * 1024,
  });

  const notify = (outcome: OtlpRequestOutcome): void => {
    if (!onRequest) return;
    try {
      onRequest(outcome);
    } catch (err) {
      onError?.('otlp onRequest hook threw', err);
    }
  };

  const refuse = (callback: sendUnaryData<Buffer>, r: Refusal, result?: DecodedCounts): void => {
    notify({ status: r.httpStatus, reason: r.reason, spans: 0, rejected: result?.accepted ?? 0, foreign: result?.foreign ?? 0 });
    const metadata = new Metadata();
    if (r.retry) metadata.set(GRPC_STATUS_DETAILS_KEY, encodeRetryStatus(r.code, r.message, retryAfter));
    callback({ code: r.code, details: r.message, metadata });
  };
  const overloaded = (why: string): Refusal => ({
    code: status.UNAVAILABLE,
    message: `FORKWATCH_ERR_OVERLOADED: ${why}; retry in ${retryAfter} s`,
    reason: 'overloaded',
    httpStatus: 503,
    retry: true,
  });

  const exportTraces = (call: ServerUnaryCall<Buffer, Buffer>, answerCall: sendUnaryData<Buffer>): void => {
    // The message's bytes count against the shared budget until the call is answered.
    const lease = options.budget?.acquire(call.request.length);
    const callback: sendUnaryData<Buffer> = lease === undefined ? answerCall : (err, value) => {
      lease.release();
      answerCall(err, value);
    };
    if (options.budget !== undefined && lease === undefined) {
      refuse(callback, overloaded(`FORKWATCH_ERR_INGEST_BUDGET: more than ${options.budget.maxBytes} bytes in flight`));
      return;
    }
    if (tokenDigest && !authorized(call.metadata.get('authorization')[0], tokenDigest)) {
      refuse(callback, { code: status.UNAUTHENTICATED, message: 'FORKWATCH_ERR_UNAUTHORIZED: a valid bearer token is required', reason: 'unauthorized', httpStatus: 401 });
      return;
    }
    const body = call.request;
    const encoding = String(call.metadata.get('grpc-encoding')[0] ?? 'identity');
    if (encoding === 'identity' && body.length > maxBodyBytes) {
      refuse(callback, { code: status.RESOURCE_EXHAUSTED, message: `FORKWATCH_ERR_BODY_TOO_LARGE: message over ${maxBodyBytes} bytes`, reason: 'too_large', httpStatus: 413 });
      return;
    }
    let result: DecodeResult;
    try {
      result = decodeProtobuf(body, decodeLimits);
    } catch (err) {
      const message = err instanceof ForkwatchError ? `${err.code}: ${err.message}` : `FORKWATCH_ERR_OTLP_DECODE: ${String(err)}`;
      refuse(callback, { code: status.INVALID_ARGUMENT, message, reason: 'decode_error', httpStatus: 400 });
      return;
    }
    // Only the counts outlive the offer: the closures below wait for the commit, and holding the
    // result would keep its decoded spans alive through every young-generation GC meanwhile.
    const counts = countsOf(result);
    const answer = (): void => {
      const outcome: OtlpRequestOutcome = { status: 200, spans: counts.accepted, rejected: counts.rejected, foreign: counts.foreign };
      if (counts.rejected > 0) outcome.reason = 'invalid_span';
      notify(outcome);
      if (counts.rejected === 0 && counts.errorMessage === undefined) return callback(null, EMPTY_RESPONSE);
      const response = encodeExportResponse('protobuf', {
        rejectedSpans: counts.rejected,
        ...(counts.errorMessage !== undefined ? { errorMessage: counts.errorMessage } : {}),
      });
      callback(null, Buffer.from(response.buffer, response.byteOffset, response.byteLength));
    };
    if (counts.accepted === 0) {
      answer();
      return;
    }
    let offered: ReturnType<IngestSink['offer']>;
    try {
      offered = sink.offer(result.spans, { received: result.total, foreign: result.foreign, rejected: result.rejected, rejectReasons: result.rejectReasons });
    } catch (err) {
      onError?.('ingest sink threw; answering UNAVAILABLE', err);
      refuse(callback, overloaded('ingest failed'), counts);
      return;
    }
    if (offered === 'overloaded') {
      refuse(callback, overloaded('ingest queue full'), counts);
      return;
    }
    if (typeof offered === 'object' && 'storage' in offered) {
      // The store cannot commit (a full disk): the exporter retries later, as over HTTP's 503.
      refuse(callback, overloaded(`storage unavailable: ${offered.storage}`), counts);
      return;
    }
    settleWithin(offered, sinkTimeoutMs, answer, (err: unknown) => {
      onError?.('ingest sink failed; answering UNAVAILABLE', err);
      refuse(callback, overloaded('ingest failed'), counts);
    });
  };

  server.addService(TRACE_SERVICE, { Export: exportTraces });

  let closing: Promise<void> | undefined;
  return {
    listen: (host, port) =>
      new Promise<number>((resolve, reject) => {
        server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${port}`, ServerCredentials.createInsecure(), (err, bound) =>
          err ? reject(err) : resolve(bound),
        );
      }),
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        // tryShutdown lets calls in flight finish (their acks wait on the commit); new calls are refused.
        server.tryShutdown(() => resolve());
      })),
  };
}

function authorized(value: string | Buffer | undefined, tokenDigest: Buffer): boolean {
  if (typeof value !== 'string') return false;
  const m = /^Bearer[ ]+(.+)$/i.exec(value.trim());
  if (!m) return false;
  // Digests have equal lengths, so the comparison time does not depend on the token's length.
  return timingSafeEqual(sha256(m[1]!), tokenDigest);
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

function positive(v: number | undefined, dflt: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : dflt;
}
