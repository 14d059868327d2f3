import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Fastify from 'fastify';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { createError } from '../errors.js';
import type { DecodeLimits } from '../otlp/decode-limits.js';
import { IngestBudget } from '../otlp/ingest-budget.js';
import type { IngestSink } from '../otlp/ingest-sink.js';
import { IngestTurns } from '../otlp/ingest-turns.js';
import { createOtlpTracesHandler, type OtlpErrorLog } from './otlp-traces-handler.js';
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
  /**
   * The queue where received bodies wait for their turn to be decoded and correlated, one per turn
   * of the event loop, shared with the detector's other receivers. Default: a queue of its own.
   */
  turns?: IngestTurns;
  /** `Retry-After` on 429 and 503, seconds. Default 2. */
  retryAfterSeconds?: number;
  /** How long a sink's promise may take before the request is answered 503, ms. Default 10000. */
  sinkTimeoutMs?: number;
  /** Overrides of the decoders' bounds (DEFAULT_DECODE_LIMITS). */
  decodeLimits?: Partial<DecodeLimits>;
  /** Called once per request with its outcome (metrics hook); exceptions it throws are swallowed. */
  onRequest?: (outcome: OtlpRequestOutcome) => void;
  /**
   * Fastify logger option. Default false (no logging). With a logger, every request goes through
   * fastify (which logs it); without one, `POST /v1/traces` is served by node:http directly.
   */
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

/** What fastify hands a server factory: its own defaults of the options it would apply to a server of its own. */
interface FactoryOptions {
  http?: Record<string, unknown>;
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
  maxRequestsPerSocket: number;
}

/**
 * Builds the OTLP/HTTP receiver: `POST /v1/traces` with protobuf or JSON bodies, optionally gzip.
 * The instance is ready but not listening; the caller calls `listen` (default port 4318 is the
 * CLI's business) and `close`.
 *
 * The exact request line `POST /v1/traces` (what exporters send) is served by node:http directly
 * ({@link createOtlpTracesHandler}); every other request, and every request while closing or when
 * a logger is set, goes to fastify, whose route for the same path (reached by however else the
 * path is written) runs the route auth and hands over to the same handler, and whose not-found
 * handler and closing answer (503) are unchanged.
 */
export async function createOtlpServer(options: OtlpServerOptions): Promise<FastifyInstance> {
  const maxBodyBytes = positive(options.maxBodyBytes, DEFAULT_OTLP_SERVER_OPTIONS.maxBodyBytes);
  const handler = createOtlpTracesHandler({
    sink: options.sink,
    authToken: options.authToken || undefined,
    maxBodyBytes,
    maxDecompressedBytes: positive(options.maxDecompressedBytes, DEFAULT_OTLP_SERVER_OPTIONS.maxDecompressedBytes),
    budget: options.budget ?? new IngestBudget(DEFAULT_OTLP_SERVER_OPTIONS.maxInFlightBytes),
    turns: options.turns ?? new IngestTurns(),
    retryAfterSeconds: positive(options.retryAfterSeconds, DEFAULT_OTLP_SERVER_OPTIONS.retryAfterSeconds),
    sinkTimeoutMs: positive(options.sinkTimeoutMs, DEFAULT_OTLP_SERVER_OPTIONS.sinkTimeoutMs),
    decodeLimits: options.decodeLimits,
    notify: (outcome) => {
      if (!options.onRequest) return;
      try {
        options.onRequest(outcome);
      } catch (err) {
        app.log.warn({ err }, 'otlp onRequest hook threw');
      }
    },
  });
  const direct = !options.logger;
  let closing = false;
  const appLog: OtlpErrorLog = (obj, message) => app.log.error(obj, message);

  const app: FastifyInstance = Fastify({
    logger: options.logger ?? false,
    bodyLimit: maxBodyBytes,
    ...fastifyLimitOptions(options),
    // The server fastify would make (the same options applied), with the exporters' request line
    // served before fastify sees it.
    serverFactory: (fastifyHandler, factoryOptions) => {
      const opts = factoryOptions as unknown as FactoryOptions;
      const server = createServer(opts.http ?? {}, (req: IncomingMessage, res: ServerResponse) => {
        if (direct && !closing && req.url === OTLP_TRACES_PATH && req.method === 'POST') handler.handle(req, res, appLog, false);
        else fastifyHandler(req, res);
      });
      server.keepAliveTimeout = opts.keepAliveTimeout;
      server.requestTimeout = opts.requestTimeout;
      server.setTimeout(opts.connectionTimeout);
      if (opts.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = opts.maxRequestsPerSocket;
      return server;
    },
  });
  // Set with fastify's own closing flag: from then on fastify answers new requests (503).
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  applyConnectionLimit(app, options);
  installRouteAuth(app, {
    ...(options.authToken ? { token: options.authToken } : {}),
    deny: (req, reply) => {
      // route-auth set WWW-Authenticate on the reply, which hijacking drops: the handler sets its own.
      reply.hijack();
      handler.refuse(req.raw, reply.raw, createError('FORKWATCH_ERR_UNAUTHORIZED'));
    },
  });
  // No body parsing by fastify: the route hands the unread request over in onRequest.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (_req, body, done) => {
    done(null, body);
  });

  app.post(OTLP_TRACES_PATH, {
    config: { auth: 'token' } satisfies RouteAuthConfig,
    // Auth ran first (installRouteAuth's hook); the body is still unread.
    onRequest: async (req, reply) => {
      reply.hijack();
      handler.handle(req.raw, reply.raw, (obj, message) => req.log.error(obj, message), true);
    },
    handler: async () => {
      throw new Error('unreachable: the onRequest hook answers every request of this route');
    },
  });

  return app;
}

function positive(v: number | undefined, dflt: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : dflt;
}
