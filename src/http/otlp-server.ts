import { Transform } from 'node:stream';
import Fastify from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { ForkwatchError, createError } from '../errors.js';
import type { ErrorCode } from '../errors.js';
import { decodeJson } from '../otlp/decode-json.js';
import type { DecodeLimits } from '../otlp/decode-limits.js';
import { decodeProtobuf } from '../otlp/decode-protobuf.js';
import { countsOf, type DecodedCounts } from '../otlp/decode-result.js';
import { encodeErrorResponse, encodeExportResponse } from '../otlp/export-response.js';
import type { OtlpFormat } from '../otlp/export-response.js';
import { IngestBudget, type IngestLease } from '../otlp/ingest-budget.js';
import type { IngestRefusal, IngestSink } from '../otlp/ingest-sink.js';
import { encodingOf, formatOf, gunzipBounded, withTimeout } from './otlp-request.js';
import { installRouteAuth, type RouteAuthConfig } from './route-auth.js';
import { applyConnectionLimit, fastifyLimitOptions, type ServerLimits } from './server-limits.js';

/** Why a request (or some of its spans) was refused; the `reason` of `forkwatch_spans_rejected_total`. */
export type OtlpRefusalReason =
  | 'decode_error'
  | 'too_large'
  | 'unsupported_media_type'
  | 'unauthorized'
  | 'overloaded'
  | 'invalid_span';

/** What became of one `POST /v1/traces`, reported to {@link OtlpServerOptions.onRequest}. */
export interface OtlpRequestOutcome {
  /** HTTP status answered. */
  status: number;
  /** Set when the request was refused, or on a 200 when some spans were rejected (`invalid_span`). */
  reason?: OtlpRefusalReason;
  /** Forkwatch spans ingested (handed to the sink and accepted); 0 unless status is 200. */
  spans: number;
  /**
   * Forkwatch spans refused, counted under `reason`: on 200 those the decoder rejected
   * (`invalid_span`); on 503 every decoded forkwatch span of the batch (`overloaded`); 0 when the
   * body was never decoded (401, 413, 415, 400: the count is unknown).
   */
  rejected: number;
  /** Non-forkwatch spans skipped (200 and 503). */
  foreign: number;
}

export interface OtlpServerOptions extends ServerLimits {
  /** Where decoded forkwatch spans go. Required. */
  sink: IngestSink;
  /** When set, requests need `Authorization: Bearer <authToken>`; checked before the body is read. Default: unset. */
  authToken?: string;
  /** Largest request body accepted, bytes, as received (compressed). Default 4 MiB. */
  maxBodyBytes?: number;
  /** Largest gzip body after inflation, bytes; inflation stops there. Default 16 MiB. */
  maxDecompressedBytes?: number;
  /**
   * Bytes of OTLP bodies in flight (being read, inflated, or decoded and waiting for their commit),
   * shared with the detector's other receivers. Past it a request is answered 429 + Retry-After
   * before its body is read. Default: a budget of its own of {@link DEFAULT_OTLP_SERVER_OPTIONS}.maxInFlightBytes.
   */
  budget?: IngestBudget;
  /** `Retry-After` on 429 and 503, seconds. Default 2. */
  retryAfterSeconds?: number;
  /** How long a sink's promise may take before the request is answered 503, ms. Default 10000. */
  sinkTimeoutMs?: number;
  /** Overrides of the decoders' bounds (DEFAULT_DECODE_LIMITS). */
  decodeLimits?: Partial<DecodeLimits>;
  /** Called once per request with its outcome (metrics hook); exceptions it throws are swallowed. */
  onRequest?: (outcome: OtlpRequestOutcome) => void;
  /** Fastify logger option. Default false (no logging). */
  logger?: FastifyServerOptions['logger'];
}

/** Defaults of {@link OtlpServerOptions}. */
export const DEFAULT_OTLP_SERVER_OPTIONS = Object.freeze({
  maxBodyBytes: 4 * 1024 * 1024, // bytes
  maxDecompressedBytes: 16 * 1024 * 1024, // bytes
  retryAfterSeconds: 2, // seconds
  sinkTimeoutMs: 10_000, // milliseconds
  maxInFlightBytes: 64 * 1024 * 1024, // bytes
});

/** The OTLP/HTTP traces path. */
export const OTLP_TRACES_PATH = '/v1/traces';

const CONTENT_TYPE: Record<OtlpFormat, string> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
};

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

/** The budget lease of each request being served. */
const leases = new WeakMap<FastifyRequest, IngestLease>();

/**
 * Builds the OTLP/HTTP receiver: `POST /v1/traces` with protobuf or JSON bodies, optionally gzip.
 * The instance is ready but not listening; the caller calls `listen` (default port 4318 is the
 * CLI's business) and `close`.
 */
export async function createOtlpServer(options: OtlpServerOptions): Promise<FastifyInstance> {
  const maxBodyBytes = positive(options.maxBodyBytes, DEFAULT_OTLP_SERVER_OPTIONS.maxBodyBytes);
  const maxDecompressedBytes = positive(options.maxDecompressedBytes, DEFAULT_OTLP_SERVER_OPTIONS.maxDecompressedBytes);
  const retryAfter = positive(options.retryAfterSeconds, DEFAULT_OTLP_SERVER_OPTIONS.retryAfterSeconds);
  const sinkTimeoutMs = positive(options.sinkTimeoutMs, DEFAULT_OTLP_SERVER_OPTIONS.sinkTimeoutMs);
  const { sink, decodeLimits, onRequest } = options;
  const budget = options.budget ?? new IngestBudget(DEFAULT_OTLP_SERVER_OPTIONS.maxInFlightBytes);
  const overBudget = (): ForkwatchError => createError('FORKWATCH_ERR_INGEST_BUDGET', budget.maxBytes, retryAfter);

  const app = Fastify({ logger: options.logger ?? false, bodyLimit: maxBodyBytes, ...fastifyLimitOptions(options) });
  applyConnectionLimit(app, options);
  installRouteAuth(app, {
    ...(options.authToken ? { token: options.authToken } : {}),
    deny: (req, reply) => refuse(req, reply, createError('FORKWATCH_ERR_UNAUTHORIZED')),
  });

  const notify = (outcome: OtlpRequestOutcome): void => {
    if (!onRequest) return;
    try {
      onRequest(outcome);
    } catch (err) {
      app.log.warn({ err }, 'otlp onRequest hook threw');
    }
  };

  const refuse = (req: FastifyRequest, reply: FastifyReply, err: ForkwatchError, result?: DecodedCounts): FastifyReply => {
    const format = formatOf(req) ?? 'json';
    if (err.statusCode === 503 || err.statusCode === 429) reply.header('retry-after', String(retryAfter));
    // A refused body that was never read is not read now: the connection closes instead.
    if (err.code === 'FORKWATCH_ERR_INGEST_BUDGET') reply.header('connection', 'close');
    notify({
      status: err.statusCode,
      reason: REASON_BY_CODE[err.code] ?? 'decode_error',
      spans: 0,
      rejected: result?.accepted ?? 0,
      foreign: result?.foreign ?? 0,
    });
    return reply
      .code(err.statusCode)
      .type(CONTENT_TYPE[format])
      .send(encodeErrorResponse(format, err.statusCode, err.code, err.message));
  };

  // Content is checked by the onRequest hook; this parser only buffers, under bodyLimit.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (_req, body, done) => {
    done(null, body);
  });

  app.setErrorHandler((error: Error & { code?: string; statusCode?: number }, req, reply) => {
    if (error instanceof ForkwatchError) return refuse(req, reply, error);
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return refuse(req, reply, createError('FORKWATCH_ERR_BODY_TOO_LARGE', maxBodyBytes));
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      return refuse(req, reply, createError('FORKWATCH_ERR_OTLP_DECODE', error.message));
    }
    req.log.error({ err: error }, 'otlp receiver failed');
    notify({ status: 500, spans: 0, rejected: 0, foreign: 0 });
    return reply.code(500).type(CONTENT_TYPE.json).send({ code: 13, message: 'internal error', statusCode: 500 });
  });

  app.post(OTLP_TRACES_PATH, {
    config: { auth: 'token' } satisfies RouteAuthConfig,
    // Everything that can be refused without the body is refused before it is read (auth first, by installRouteAuth).
    onRequest: async (req, reply) => {
      if (!formatOf(req)) {
        return refuse(req, reply, createError('FORKWATCH_ERR_UNSUPPORTED_MEDIA_TYPE', req.headers['content-type'] ?? '(none)'));
      }
      const enc = encodingOf(req);
      if (enc === undefined) {
        return refuse(req, reply, createError('FORKWATCH_ERR_UNSUPPORTED_ENCODING', String(req.headers['content-encoding'])));
      }
      const len = Number(req.headers['content-length']);
      if (Number.isFinite(len) && len > maxBodyBytes) {
        return refuse(req, reply, createError('FORKWATCH_ERR_BODY_TOO_LARGE', maxBodyBytes));
      }
      // Before the body is read: its announced length, or nothing yet for chunked bodies.
      const lease = budget.acquire(Number.isFinite(len) ? len : 0);
      if (!lease) return refuse(req, reply, overBudget());
      leases.set(req, lease);
      // 'close' comes once the answer is sent or the client went away: either way the bytes are free.
      reply.raw.once('close', () => lease.release());
      return undefined;
    },
    // A body of unannounced length is counted as it arrives.
    preParsing: async (req, _reply, payload) => {
      const lease = leases.get(req);
      if (!lease || Number.isFinite(Number(req.headers['content-length']))) return payload;
      let seen = 0;
      const counted = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          seen += chunk.length;
          if (!lease.growTo(seen)) return cb(overBudget());
          cb(null, chunk);
        },
      });
      payload.on('error', (err) => counted.destroy(err));
      // After fastify has answered (e.g. 413 at bodyLimit) nobody listens: a late refusal must not crash.
      counted.on('error', () => undefined);
      return payload.pipe(counted);
    },
    handler: async (req, reply) => {
      const format = formatOf(req)!;
      let body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      if (encodingOf(req) === 'gzip') {
        // Inflated OTLP is typically 3-10x its gzip; reserve a guess, then settle on the real size.
        const lease = leases.get(req);
        const sent = body.length;
        if (lease && !lease.growTo(sent + Math.min(maxDecompressedBytes, body.length * 4))) {
          return refuse(req, reply, overBudget());
        }
        body = await gunzipBounded(body, maxDecompressedBytes);
        if (lease && !lease.growTo(sent + body.length)) {
          return refuse(req, reply, overBudget());
        }
      }
      const result = format === 'protobuf' ? decodeProtobuf(body, decodeLimits) : decodeJson(body, decodeLimits);
      // Only these counts outlive the offer: the spans themselves must not stay reachable while
      // the request waits for its commit (4 requests in flight kept ~2,000 decoded spans alive
      // through every young-generation GC, which then copied them).
      const counts = countsOf(result);
      if (result.spans.length > 0) {
        const meta = {
          received: result.total,
          foreign: result.foreign,
          rejected: result.rejected,
          rejectReasons: result.rejectReasons,
        };
        // Built only when refusing: an Error (and its stack) per accepted request was ~1 % of a
        // detector's CPU profile at full ingest.
        const overloaded = (): ReturnType<typeof createError> => createError('FORKWATCH_ERR_OVERLOADED', retryAfter);
        let offered: Promise<void> | IngestRefusal;
        try {
          offered = sink.offer(result.spans, meta);
        } catch (err) {
          req.log.error({ err }, 'ingest sink threw; answering 503');
          return refuse(req, reply, overloaded(), counts);
        }
        if (offered === 'overloaded') return refuse(req, reply, overloaded(), counts);
        if (typeof offered === 'object' && 'storage' in offered) {
          return refuse(req, reply, createError('FORKWATCH_ERR_STORAGE_UNAVAILABLE', offered.storage, retryAfter), counts);
        }
        try {
          await withTimeout(offered, sinkTimeoutMs);
        } catch (err) {
          req.log.error({ err }, 'ingest sink failed; answering 503');
          return refuse(req, reply, overloaded(), counts);
        }
      }

      const outcome: OtlpRequestOutcome = {
        status: 200,
        spans: counts.accepted,
        rejected: counts.rejected,
        foreign: counts.foreign,
      };
      if (counts.rejected > 0) outcome.reason = 'invalid_span';
      notify(outcome);
      const response = encodeExportResponse(format, {
        rejectedSpans: counts.rejected,
        ...(counts.errorMessage !== undefined ? { errorMessage: counts.errorMessage } : {}),
      });
      return reply.code(200).type(CONTENT_TYPE[format]).send(Buffer.from(response.buffer, response.byteOffset, response.byteLength));
    },
  });

  return app;
}

function positive(v: number | undefined, dflt: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : dflt;
}
