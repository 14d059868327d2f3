import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { ForkwatchError, createError } from '../../errors.js';
import type { OtlpRefusalReason, OtlpRequestOutcome } from '../../http/otlp-server.js';
import { gunzipBounded } from '../../http/otlp-request.js';
import { decodeProtobuf } from '../decode-protobuf.js';
import type { DecodeLimits } from '../decode-limits.js';
import { countsOf, type DecodeResult, type DecodedCounts } from '../decode-result.js';
import { encodeExportResponse } from '../export-response.js';
import type { IngestSink } from '../ingest-sink.js';
import { IngestBudget, type IngestLease } from '../ingest-budget.js';
import { IngestTurns } from '../ingest-turns.js';
import { settleWithin } from '../settle-within.js';
import { GRPC_STATUS, answerOk, answerStatus } from './grpc-answer.js';
import { readGrpcMessage } from './grpc-message-reader.js';
import { limitGrpcSessions } from './grpc-session-limits.js';
import { encodeRetryStatus } from './grpc-status-details.js';

/** The OTLP trace export method, as the Collector's OTLP exporter calls it. */
export const TRACE_EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

export interface OtlpGrpcServerOptions {
  /** Where decoded forkwatch spans go (the same sink as the HTTP receiver's). Required. */
  sink: IngestSink;
  /** When set, calls need `authorization: Bearer <authToken>` metadata. Default: unset. */
  authToken?: string;
  /** Largest message accepted as sent (its length prefix), bytes, compressed or not (as the HTTP body limit). Default 4 MiB. */
  maxBodyBytes?: number;
  /** Largest message after gzip inflation, bytes; inflation stops there. Default 16 MiB. */
  maxDecompressedBytes?: number;
  /** Retry delay in the `RetryInfo` of overload answers, seconds. Default 2. */
  retryAfterSeconds?: number;
  /** How long a sink's promise may take before the call is answered UNAVAILABLE, ms. Default 10000. */
  sinkTimeoutMs?: number;
  /** Overrides of the decoder's bounds. */
  decodeLimits?: Partial<DecodeLimits>;
  /**
   * The bytes-in-flight budget shared with the HTTP receiver. A call reserves its message's
   * announced length from the 5-byte prefix before any of the message is kept; past the budget it
   * is answered UNAVAILABLE with RetryInfo and the rest of the message is never read. Default: a
   * budget of its own of 64 MiB.
   */
  budget?: IngestBudget;
  /** The queue where received messages wait for their turn to be decoded and correlated (one per turn of the event loop), shared with the HTTP receiver. Default: a queue of its own. */
  turns?: IngestTurns;
  /** Longest time from a call's start to its whole message received, ms; then DEADLINE_EXCEEDED and the stream is reset. Default 30000. */
  requestTimeoutMs?: number;
  /** A connection with no call open for this long gets GOAWAY and is closed, ms. Default 60000. */
  idleTimeoutMs?: number;
  /** Open connections at once; further ones are closed on accept. Default 1024. */
  maxConnections?: number;
  /** Calls open at once on one connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS). Default 100. */
  maxConcurrentStreams?: number;
  /**
   * Called once per call with its outcome, `status` being the HTTP receiver's status for the same
   * case (200, 400, 401, 413, 503), so `forkwatch_otlp_requests_total{code}` reads the same for both.
   */
  onRequest?: (outcome: OtlpRequestOutcome) => void;
  /** Where a throwing hook or sink is reported. Default: ignored. */
  onError?: (message: string, err: unknown) => void;
}

/** Defaults of {@link OtlpGrpcServerOptions}; the same numbers as the HTTP receiver's where both have them. */
export const DEFAULT_OTLP_GRPC_OPTIONS = Object.freeze({
  maxBodyBytes: 4 * 1024 * 1024, // bytes
  maxDecompressedBytes: 16 * 1024 * 1024, // bytes
  retryAfterSeconds: 2, // seconds
  sinkTimeoutMs: 10_000, // milliseconds
  maxInFlightBytes: 64 * 1024 * 1024, // bytes
  requestTimeoutMs: 30_000, // milliseconds
  idleTimeoutMs: 60_000, // milliseconds
  maxConnections: 1024, // connections
  maxConcurrentStreams: 100, // streams per connection
});

export interface OtlpGrpcServer {
  /** Binds `host:port` (0 = ephemeral); resolves the bound port. */
  listen(host: string, port: number): Promise<number>;
  /** Connections open now. */
  readonly connections: number;
  /** Stops accepting calls, waits for those in flight (their batches reach the sink), then resolves. */
  close(): Promise<void>;
}

// An empty ExportTraceServiceResponse: the answer to nearly every call, encoded once.
const EMPTY_RESPONSE = Buffer.alloc(0);
const MESSAGE_PREFIX_BYTES = 5;

interface Refusal {
  code: number;
  message: string;
  /** Reported through onRequest (with httpStatus) when set. */
  reason?: OtlpRefusalReason;
  httpStatus?: number;
  retry?: boolean;
}

/**
 * Builds the OTLP/gRPC receiver: `TraceService/Export` on a node:http2 server of its own, with the
 * same limits, auth, partial success and overload answers as the HTTP receiver, in gRPC status
 * terms: UNAUTHENTICATED, INVALID_ARGUMENT (undecodable), RESOURCE_EXHAUSTED without retry info
 * (too large: permanent), UNAVAILABLE with `RetryInfo` (overloaded, over the bytes-in-flight
 * budget, or the sink failed: retry), DEADLINE_EXCEEDED (message not received within
 * requestTimeoutMs). The message is read by hand rather than by grpc-js, whose server buffered
 * whole messages before any budget could see them (40 concurrent 15 MiB calls: +850 MiB).
 */
export function createOtlpGrpcServer(options: OtlpGrpcServerOptions): OtlpGrpcServer {
  const d = DEFAULT_OTLP_GRPC_OPTIONS;
  const maxBodyBytes = positive(options.maxBodyBytes, d.maxBodyBytes);
  const maxDecompressedBytes = Math.max(maxBodyBytes, positive(options.maxDecompressedBytes, d.maxDecompressedBytes));
  const retryAfter = positive(options.retryAfterSeconds, d.retryAfterSeconds);
  const sinkTimeoutMs = positive(options.sinkTimeoutMs, d.sinkTimeoutMs);
  const requestTimeoutMs = positive(options.requestTimeoutMs, d.requestTimeoutMs);
  const budget = options.budget ?? new IngestBudget(d.maxInFlightBytes);
  const turns = options.turns ?? new IngestTurns();
  const { sink, decodeLimits, onRequest, onError } = options;
  const tokenDigest = options.authToken ? sha256(options.authToken) : undefined;

  const server = createServer({
    settings: { maxConcurrentStreams: positive(options.maxConcurrentStreams, d.maxConcurrentStreams) },
  });
  const sessions = limitGrpcSessions(server, {
    maxConnections: positive(options.maxConnections, d.maxConnections),
    idleTimeoutMs: positive(options.idleTimeoutMs, d.idleTimeoutMs),
  });

  const notify = (outcome: OtlpRequestOutcome): void => {
    if (!onRequest) return;
    try {
      onRequest(outcome);
    } catch (err) {
      onError?.('otlp onRequest hook threw', err);
    }
  };

  const refuse = (stream: ServerHttp2Stream, r: Refusal, result?: DecodedCounts): void => {
    if (r.reason !== undefined && r.httpStatus !== undefined) {
      notify({ status: r.httpStatus, reason: r.reason, spans: 0, rejected: result?.accepted ?? 0, foreign: result?.foreign ?? 0 });
    }
    answerStatus(stream, r.code, r.message, r.retry ? encodeRetryStatus(r.code, r.message, retryAfter) : undefined);
  };
  const overloaded = (why: string): Refusal => ({
    code: GRPC_STATUS.UNAVAILABLE,
    message: `FORKWATCH_ERR_OVERLOADED: ${why}; retry in ${retryAfter} s`,
    reason: 'overloaded',
    httpStatus: 503,
    retry: true,
  });
  const overBudget = (): Refusal => overloaded(`FORKWATCH_ERR_INGEST_BUDGET: more than ${budget.maxBytes} bytes in flight`);
  const tooLarge = (err: ForkwatchError): Refusal => ({ code: GRPC_STATUS.RESOURCE_EXHAUSTED, message: `${err.code}: ${err.message}`, reason: 'too_large', httpStatus: 413 });
  const undecodable = (message: string): Refusal => ({ code: GRPC_STATUS.INVALID_ARGUMENT, message, reason: 'decode_error', httpStatus: 400 });

  /** Decodes and correlates in its turn (one message per turn of the event loop: health probes get in between). */
  const ingestInTurn = (stream: ServerHttp2Stream, body: Buffer): void =>
    turns.run(() => {
      // The client reset or went away while the message waited: nobody to answer.
      if (stream.destroyed || stream.closed) return;
      ingest(stream, body);
    });

  const ingest = (stream: ServerHttp2Stream, body: Buffer): void => {
    let result: DecodeResult;
    try {
      result = decodeProtobuf(body, decodeLimits);
    } catch (err) {
      refuse(stream, undecodable(err instanceof ForkwatchError ? `${err.code}: ${err.message}` : `FORKWATCH_ERR_OTLP_DECODE: ${String(err)}`));
      return;
    }
    // Only the counts outlive the offer: the closures below wait for the commit, and holding the
    // result would keep its decoded spans alive through every young-generation GC meanwhile.
    const counts = countsOf(result);
    const answer = (): void => {
      const outcome: OtlpRequestOutcome = { status: 200, spans: counts.accepted, rejected: counts.rejected, foreign: counts.foreign };
      if (counts.rejected > 0) outcome.reason = 'invalid_span';
      notify(outcome);
      if (counts.rejected === 0 && counts.errorMessage === undefined) return answerOk(stream, EMPTY_RESPONSE);
      answerOk(
        stream,
        encodeExportResponse('protobuf', { rejectedSpans: counts.rejected, ...(counts.errorMessage !== undefined ? { errorMessage: counts.errorMessage } : {}) }),
      );
    };
    if (counts.accepted === 0) return answer();
    let offered: ReturnType<IngestSink['offer']>;
    try {
      offered = sink.offer(result.spans, { received: result.total, foreign: result.foreign, rejected: result.rejected, rejectReasons: result.rejectReasons });
    } catch (err) {
      onError?.('ingest sink threw; answering UNAVAILABLE', err);
      return refuse(stream, overloaded('ingest failed'), counts);
    }
    if (offered === 'overloaded') return refuse(stream, overloaded('ingest queue full'), counts);
    // The store cannot commit (a full disk): the exporter retries later, as over HTTP's 503.
    if (typeof offered === 'object' && 'storage' in offered) return refuse(stream, overloaded(`storage unavailable: ${offered.storage}`), counts);
    settleWithin(offered, sinkTimeoutMs, answer, (err: unknown) => {
      onError?.('ingest sink failed; answering UNAVAILABLE', err);
      refuse(stream, overloaded('ingest failed'), counts);
    });
  };

  const inflate = (stream: ServerHttp2Stream, body: Buffer, lease: IngestLease): void => {
    // Inflated OTLP is typically 3-10x its gzip; reserve a guess, then settle on the real size.
    const sent = body.length + MESSAGE_PREFIX_BYTES;
    if (!lease.growTo(sent + Math.min(maxDecompressedBytes, body.length * 4))) return refuse(stream, overBudget());
    gunzipBounded(body, maxDecompressedBytes).then(
      (inflated) => {
        if (!lease.growTo(sent + inflated.length)) return refuse(stream, overBudget());
        ingestInTurn(stream, inflated);
      },
      (err: unknown) => {
        if (err instanceof ForkwatchError && err.code === 'FORKWATCH_ERR_DECOMPRESSED_TOO_LARGE') return refuse(stream, tooLarge(err));
        refuse(stream, undecodable(err instanceof ForkwatchError ? `${err.code}: ${err.message}` : String(err)));
      },
    );
  };

  let closing = false;
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    // A client's reset or a protocol error ends its own call only.
    stream.on('error', () => undefined);
    if (closing) return refuse(stream, { code: GRPC_STATUS.UNAVAILABLE, message: 'FORKWATCH_ERR_OVERLOADED: shutting down' });
    if (headers[':method'] !== 'POST' || headers[':path'] !== TRACE_EXPORT_PATH) {
      return refuse(stream, { code: GRPC_STATUS.UNIMPLEMENTED, message: `unknown method ${String(headers[':path'])}: this port serves ${TRACE_EXPORT_PATH}` });
    }
    if (!String(headers['content-type'] ?? '').startsWith('application/grpc')) {
      if (!stream.headersSent) stream.respond({ ':status': 415 }, { endStream: true });
      if (!stream.readableEnded) stream.close();
      return;
    }
    if (tokenDigest && !authorized(headers.authorization, tokenDigest)) {
      return refuse(stream, { code: GRPC_STATUS.UNAUTHENTICATED, message: 'FORKWATCH_ERR_UNAUTHORIZED: a valid bearer token is required', reason: 'unauthorized', httpStatus: 401 });
    }
    const encoding = String(headers['grpc-encoding'] ?? 'identity').toLowerCase();
    if (encoding !== 'identity' && encoding !== 'gzip') {
      return refuse(stream, { code: GRPC_STATUS.UNIMPLEMENTED, message: `FORKWATCH_ERR_UNSUPPORTED_ENCODING: ${encoding}: use gzip or identity` });
    }
    let lease: IngestLease | undefined;
    // A stalled call (headers, then nothing or a trickle) holds a stream slot and its lease: cut it.
    const timer = setTimeout(() => {
      const err = createError('FORKWATCH_ERR_REQUEST_TIMEOUT', requestTimeoutMs);
      refuse(stream, { code: GRPC_STATUS.DEADLINE_EXCEEDED, message: `${err.code}: ${err.message}` });
    }, requestTimeoutMs);
    // The bytes are free once the call is answered or the client went away.
    stream.once('close', () => {
      clearTimeout(timer);
      lease?.release();
    });
    readGrpcMessage(
      stream,
      (prefix) => {
        if (prefix.compressed && encoding === 'identity') {
          refuse(stream, undecodable('FORKWATCH_ERR_OTLP_DECODE: compressed message without grpc-encoding'));
          return false;
        }
        if (prefix.length > maxBodyBytes) {
          refuse(stream, tooLarge(createError('FORKWATCH_ERR_BODY_TOO_LARGE', maxBodyBytes)));
          return false;
        }
        lease = budget.acquire(prefix.length + MESSAGE_PREFIX_BYTES);
        if (lease === undefined) {
          refuse(stream, overBudget());
          return false;
        }
        return true;
      },
      (problem, message, prefix) => {
        clearTimeout(timer);
        if (problem !== undefined) return refuse(stream, undecodable(`FORKWATCH_ERR_OTLP_DECODE: ${problem}`));
        if (prefix.compressed) return inflate(stream, message, lease!);
        ingestInTurn(stream, message);
      },
    );
  });

  let closed: Promise<void> | undefined;
  return {
    listen: (host, port) =>
      new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve((server.address() as AddressInfo).port);
        });
      }),
    get connections() {
      return sessions.open;
    },
    close: () =>
      (closed ??= (async () => {
        closing = true;
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        // GOAWAY: calls in flight finish (their acks wait on the commit); new ones go elsewhere.
        await sessions.closeAll();
        await stopped;
      })()),
  };
}

function authorized(value: string | string[] | undefined, tokenDigest: Buffer): boolean {
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
