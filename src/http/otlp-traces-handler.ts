import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { ForkwatchError, createError } from '../errors.js';
import type { ErrorCode } from '../errors.js';
import { decodeJson } from '../otlp/decode-json.js';
import type { DecodeLimits } from '../otlp/decode-limits.js';
import { decodeProtobuf } from '../otlp/decode-protobuf.js';
import { countsOf, type DecodeResult, type DecodedCounts } from '../otlp/decode-result.js';
import { encodeErrorResponse, encodeExportResponse } from '../otlp/export-response.js';
import type { OtlpFormat } from '../otlp/export-response.js';
import type { IngestBudget, IngestLease } from '../otlp/ingest-budget.js';
import type { IngestRefusal, IngestSink } from '../otlp/ingest-sink.js';
import type { IngestTurns } from '../otlp/ingest-turns.js';
import { settleWithin } from '../otlp/settle-within.js';
import { bearerMatches } from './api-auth.js';
import { readOtlpBody } from './otlp-body-reader.js';
import { encodingOf, formatOf, gunzipBounded } from './otlp-request.js';
import type { OtlpRefusalReason, OtlpRequestOutcome } from './otlp-server.js';

/** What {@link createOtlpTracesHandler} needs; every number already resolved to its default. */
export interface OtlpTracesHandlerOptions {
  sink: IngestSink;
  /** Bearer token the request must present; undefined: none. */
  authToken: string | undefined;
  /** Largest body as received, bytes. */
  maxBodyBytes: number;
  /** Largest gzip body after inflation, bytes. */
  maxDecompressedBytes: number;
  budget: IngestBudget;
  /** Where a received body waits for its turn to be decoded and correlated. */
  turns: IngestTurns;
  /** `Retry-After` of 429 and 503 answers, seconds. */
  retryAfterSeconds: number;
  /** How long the sink's promise may take, ms. */
  sinkTimeoutMs: number;
  decodeLimits: Partial<DecodeLimits> | undefined;
  /** Called once per answered request; must not throw. */
  notify: (outcome: OtlpRequestOutcome) => void;
}

/** Where a failing sink or receiver is reported (fastify's `log.error` shape). */
export type OtlpErrorLog = (obj: { err: unknown }, message: string) => void;

export interface OtlpTracesHandler {
  /**
   * Serves one `POST /v1/traces` on node:http's request and response. `authChecked`: the bearer
   * token was already checked (by the route's auth hook); otherwise it is checked here, first.
   */
  handle(req: IncomingMessage, res: ServerResponse, log: OtlpErrorLog, authChecked: boolean): void;
  /** Answers `err` in the request's format (JSON when it has none) and reports the outcome. */
  refuse(req: IncomingMessage, res: ServerResponse, err: ForkwatchError): void;
}

const CONTENT_TYPE: Record<OtlpFormat, string> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
};

// An empty ExportTraceServiceResponse, encoded once: nearly every answer is this one.
const ACCEPTED_BODY: Record<OtlpFormat, Buffer> = { protobuf: Buffer.alloc(0), json: Buffer.from('{}') };

const REASON_BY_CODE: Partial<Record<ErrorCode, OtlpRefusalReason>> = {
  FORKWATCH_ERR_UNAUTHORIZED: 'unauthorized',
  FORKWATCH_ERR_UNSUPPORTED_MEDIA_TYPE: 'unsupported_media_type',
  FORKWATCH_ERR_UNSUPPORTED_ENCODING: 'unsupported_media_type',
  FORKWATCH_ERR_BODY_TOO_LARGE: 'too_large',
  FORKWATCH_ERR_DECOMPRESSED_TOO_LARGE: 'too_large',
  FORKWATCH_ERR_BAD_GZIP: 'decode_error',
  FORKWATCH_ERR_OTLP_DECODE: 'decode_error',
  FORKWATCH_ERR_OVERLOADED: 'overloaded',
  FORKWATCH_ERR_INGEST_BUDGET: 'overloaded',
  FORKWATCH_ERR_STORAGE_UNAVAILABLE: 'overloaded',
};

/**
 * The OTLP/HTTP traces receiver on plain node:http, without fastify's routing, hooks, content-type
 * parsers and reply chain per request (about half of an empty request's CPU went there). What can
 * be refused without the body is refused before it is read, in this order: auth (401), content
 * type and encoding (415), announced length (413), bytes-in-flight budget (429 + Retry-After,
 * connection closed). Then the body (413 or 429 as it arrives when chunked), gzip within its
 * bounds, decode (400), the sink (503 + Retry-After when it refuses, throws, fails or passes
 * `sinkTimeoutMs`), and 200 with partial success when spans were rejected.
 */
export function createOtlpTracesHandler(o: OtlpTracesHandlerOptions): OtlpTracesHandler {
  const { sink, budget, turns, notify, decodeLimits, maxBodyBytes, maxDecompressedBytes, sinkTimeoutMs } = o;
  const retryAfter = String(o.retryAfterSeconds);
  const overBudget = (): ForkwatchError => createError('FORKWATCH_ERR_INGEST_BUDGET', budget.maxBytes, o.retryAfterSeconds);
  // Built only when refusing: an Error (and its stack) per accepted request was ~1 % of a
  // detector's CPU profile at full ingest.
  const overloaded = (): ForkwatchError => createError('FORKWATCH_ERR_OVERLOADED', o.retryAfterSeconds);

  const send = (res: ServerResponse, status: number, headers: OutgoingHttpHeaders, body: Uint8Array): void => {
    // A client that went away gets nothing; an answer already on its way is not sent twice.
    if (res.headersSent || res.destroyed) return;
    headers['content-length'] = body.byteLength;
    res.writeHead(status, headers);
    res.end(body);
  };

  /** `closeConnection`: the body was not (wholly) read, so the connection cannot carry another request. */
  const refuseAs = (res: ServerResponse, format: OtlpFormat, err: ForkwatchError, counts?: DecodedCounts, closeConnection = false): void => {
    const headers: OutgoingHttpHeaders = {};
    if (err.statusCode === 401) headers['www-authenticate'] = 'Bearer';
    if (err.statusCode === 503 || err.statusCode === 429) headers['retry-after'] = retryAfter;
    if (closeConnection || err.code === 'FORKWATCH_ERR_INGEST_BUDGET') headers.connection = 'close';
    headers['content-type'] = CONTENT_TYPE[format];
    notify({
      status: err.statusCode,
      reason: REASON_BY_CODE[err.code] ?? 'decode_error',
      spans: 0,
      rejected: counts?.accepted ?? 0,
      foreign: counts?.foreign ?? 0,
    });
    send(res, err.statusCode, headers, encodeErrorResponse(format, err.statusCode, err.code, err.message));
  };

  const accept = (res: ServerResponse, format: OtlpFormat, counts: DecodedCounts): void => {
    const outcome: OtlpRequestOutcome = { status: 200, spans: counts.accepted, rejected: counts.rejected, foreign: counts.foreign };
    if (counts.rejected > 0) outcome.reason = 'invalid_span';
    notify(outcome);
    const body =
      counts.rejected === 0 && counts.errorMessage === undefined
        ? ACCEPTED_BODY[format]
        : encodeExportResponse(format, { rejectedSpans: counts.rejected, ...(counts.errorMessage !== undefined ? { errorMessage: counts.errorMessage } : {}) });
    send(res, 200, { 'content-type': CONTENT_TYPE[format] }, body);
  };

  /** Anything but a ForkwatchError is a bug of ours: 500, logged. */
  const fail = (res: ServerResponse, format: OtlpFormat, err: unknown, log: OtlpErrorLog, closeConnection = false): void => {
    if (err instanceof ForkwatchError) return refuseAs(res, format, err, undefined, closeConnection);
    log({ err }, 'otlp receiver failed');
    notify({ status: 500, spans: 0, rejected: 0, foreign: 0 });
    send(res, 500, { 'content-type': CONTENT_TYPE.json }, Buffer.from(JSON.stringify({ code: 13, message: 'internal error', statusCode: 500 })));
  };

  /** Decodes and correlates in its turn (one batch per turn of the event loop: health probes get in between). */
  const ingestInTurn = (res: ServerResponse, format: OtlpFormat, body: Buffer, log: OtlpErrorLog): void =>
    turns.run(() => {
      // The client went away while the batch waited: nobody to answer, and its bytes are already free.
      if (res.destroyed) return;
      ingest(res, format, body, log);
    });

  const ingest = (res: ServerResponse, format: OtlpFormat, body: Buffer, log: OtlpErrorLog): void => {
    let result: DecodeResult;
    try {
      result = format === 'protobuf' ? decodeProtobuf(body, decodeLimits) : decodeJson(body, decodeLimits);
    } catch (err) {
      return fail(res, format, err, log);
    }
    // Only these counts outlive the offer: the spans themselves must not stay reachable while
    // the request waits for its commit (4 requests in flight kept ~2,000 decoded spans alive
    // through every young-generation GC, which then copied them).
    const counts = countsOf(result);
    if (result.spans.length === 0) return accept(res, format, counts);
    let offered: Promise<void> | IngestRefusal;
    try {
      offered = sink.offer(result.spans, { received: result.total, foreign: result.foreign, rejected: result.rejected, rejectReasons: result.rejectReasons });
    } catch (err) {
      log({ err }, 'ingest sink threw; answering 503');
      return refuseAs(res, format, overloaded(), counts);
    }
    if (offered === 'overloaded') return refuseAs(res, format, overloaded(), counts);
    if (typeof offered === 'object' && 'storage' in offered) {
      return refuseAs(res, format, createError('FORKWATCH_ERR_STORAGE_UNAVAILABLE', offered.storage, o.retryAfterSeconds), counts);
    }
    settleWithin(
      offered,
      sinkTimeoutMs,
      () => accept(res, format, counts),
      (err) => {
        log({ err }, 'ingest sink failed; answering 503');
        refuseAs(res, format, overloaded(), counts);
      },
    );
  };

  const inflate = (res: ServerResponse, format: OtlpFormat, body: Buffer, lease: IngestLease, log: OtlpErrorLog): void => {
    // Inflated OTLP is typically 3-10x its gzip; reserve a guess, then settle on the real size.
    const sent = body.length;
    if (!lease.growTo(sent + Math.min(maxDecompressedBytes, sent * 4))) return refuseAs(res, format, overBudget());
    gunzipBounded(body, maxDecompressedBytes).then(
      (inflated) => {
        if (!lease.growTo(sent + inflated.length)) return refuseAs(res, format, overBudget());
        ingestInTurn(res, format, inflated, log);
      },
      (err: unknown) => fail(res, format, err, log),
    );
  };

  return {
    refuse: (req, res, err) => refuseAs(res, formatOf(req) ?? 'json', err),
    handle(req, res, log, authChecked) {
      const headers = req.headers;
      if (!authChecked && o.authToken !== undefined && !bearerMatches(headers.authorization, o.authToken)) {
        return refuseAs(res, formatOf(req) ?? 'json', createError('FORKWATCH_ERR_UNAUTHORIZED'));
      }
      const format = formatOf(req);
      if (format === undefined) {
        return refuseAs(res, 'json', createError('FORKWATCH_ERR_UNSUPPORTED_MEDIA_TYPE', headers['content-type'] ?? '(none)'));
      }
      const encoding = encodingOf(req);
      if (encoding === undefined) {
        return refuseAs(res, format, createError('FORKWATCH_ERR_UNSUPPORTED_ENCODING', String(headers['content-encoding'])));
      }
      const announced = headers['content-length'] === undefined ? NaN : Number(headers['content-length']);
      const length = Number.isFinite(announced) ? announced : undefined;
      if (length !== undefined && length > maxBodyBytes) return refuseAs(res, format, createError('FORKWATCH_ERR_BODY_TOO_LARGE', maxBodyBytes));
      // Before the body is read: its announced length, or nothing yet for chunked bodies.
      const lease = budget.acquire(length ?? 0);
      if (lease === undefined) return refuseAs(res, format, overBudget());
      // 'close' comes once the answer is sent or the client went away: either way the bytes are free.
      res.once('close', () => lease.release());
      readOtlpBody(req, { length, maxBytes: maxBodyBytes, lease, overBudget }, (err, body) => {
        if (err !== undefined) return refuseAs(res, format, err, undefined, true);
        if (encoding === 'gzip') return inflate(res, format, body, lease, log);
        ingestInTurn(res, format, body, log);
      });
    },
  };
}
