import type { DiagLogger } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import type { DetectorConfig } from '../config/defaults.js';
import { splitPeers } from '../config/load-config.js';
import { CorrelationEngine } from '../correlate/correlation-engine.js';
import { listenOrExplain, probePort } from './listen-or-explain.js';
import { systemClock, type Clock, type EngineListener } from '../correlate/types.js';
import { createApiServer } from '../http/api-server.js';
import { createOtlpServer } from '../http/otlp-server.js';
import { createMetrics, type DetectorMetrics } from '../metrics/create-metrics.js';
import { createOtlpGrpcServer, type OtlpGrpcServer } from '../otlp/grpc/otlp-grpc-server.js';
import { IngestBudget } from '../otlp/ingest-budget.js';
import { IngestTurns } from '../otlp/ingest-turns.js';
import type { IngestMeta, IngestSink } from '../otlp/ingest-sink.js';
import { openStore } from '../storage/open-store.js';
import type { Store } from '../storage/store.js';
import { IngestPipeline } from './ingest-pipeline.js';
import type { SpanRecord } from '../model/span-record.js';
import { ATTR_SIDE } from '@forkwatch/instrumentation/semconv';

/** How often old findings and session states are pruned, ms. */
const PRUNE_INTERVAL_MS = 3_600_000;

export interface RunningDetector {
  /** `http://host:port` of the OTLP receiver (POST /v1/traces). */
  otlpUrl: string;
  /** `host:port` of the OTLP/gRPC receiver (TraceService/Export). */
  otlpGrpcAddress: string;
  /** `http://host:port` of the API and /metrics. */
  httpUrl: string;
  engine: CorrelationEngine;
  store: Store;
  metrics: DetectorMetrics;
  /** The OTLP bytes-in-flight budget every receiver of this detector shares. */
  budget: IngestBudget;
  /** Drains: stop accepting, finish batches in hand, flush SQLite. Resolves true when all was committed. */
  close(): Promise<boolean>;
}

/**
 * Assembles the detector: OTLP receiver (decode) → correlation engine (correlate) → SQLite
 * (persist) → metrics and API (expose), and restores the engine's pending correlations from a
 * previous run before it accepts spans.
 */
export async function startDetector(config: DetectorConfig, logger: DiagLogger, clock: Clock = systemClock): Promise<RunningDetector> {
  const store = openStore({ path: config.db, retentionMs: config.retentionMs, maxKeptEvents: config.maxKeptEvents });
  const metrics = createMetrics({ maxServices: config.maxServices, processMetrics: true });
  let pipeline: IngestPipeline | undefined;
  const listener: EngineListener = {
    onFinding(finding, isNew, info) {
      metrics.onFinding(finding, isNew, info);
      pipeline?.addFinding(finding);
      if (isNew) logger.warn('finding', { kind: finding.kind, service: finding.service, id: finding.id, summary: finding.summary });
    },
    onFindingResolved(finding) {
      metrics.onFindingResolved?.(finding);
      pipeline?.addFinding(finding);
    },
    onResume(outcome, service, traceId) {
      metrics.onResume(outcome, service, traceId);
    },
    onDrop(reason, count) {
      metrics.onDrop(reason, count);
    },
  };
  const engine = new CorrelationEngine(clock, listener, {
    decisionWindowMs: config.decisionWindowMs,
    maxSessions: config.maxSessions,
    maxTrackedEvents: config.maxTrackedEvents,
    maxEventsPerIncarnation: config.maxEventsPerIncarnation,
    maxRequestsPerSession: config.maxRequestsPerSession,
    sessionTtlMs: config.sessionTtlMs,
    compactAfterMs: config.compactAfterMs,
    maxKeptEvents: config.maxKeptEvents,
    reissueWindowMs: config.reissueWindowMs,
    maxStatelessCalls: config.maxStatelessCalls,
  });
  let restored = 0;
  for (const { key, state, log } of store.loadSessionStates()) {
    engine.restore(key, state, log);
    restored++;
  }
  metrics.bindStats(() => engine.stats());
  pipeline = new IngestPipeline({
    engine,
    store,
    maxQueuedSpans: config.maxQueuedSpans,
    commitIntervalMs: config.commitIntervalMs,
    logger,
    onQueueSize: (n) => metrics.setQueueSpans(n),
    onStorageError: () => metrics.storageError(),
  });
  const p = pipeline;
  // Restored sessions whose window elapsed while the detector was down are decided before it
  // accepts spans, as a tick would have before it stopped: among them the sessions decided then
  // without a save (a decision that reported nothing is not written), whose next span must start
  // a window of its own rather than join one that elapsed. Unsliced: all of them before the
  // receivers listen (restoring them was as long). Their findings go out with the first commit.
  if (restored > 0) {
    engine.tick();
    p.tick();
  }
  // Series of a server service exist from its first span, not its first finding.
  const knownServices = new Set<string>();
  const noteServerServices = (spans: SpanRecord[]): void => {
    for (const s of spans) {
      if (knownServices.has(s.service) || s.attributes[ATTR_SIDE] !== 'server') continue;
      if (knownServices.size < config.maxServices) knownServices.add(s.service);
      metrics.noteService(s.service);
    }
  };
  const budget = new IngestBudget(config.maxInFlightBytes);
  // Both receivers' batches take turns on one queue: one batch per turn of the event loop.
  const turns = new IngestTurns();
  let ready = false;
  let otlp: FastifyInstance | undefined;
  let api: FastifyInstance | undefined;
  let grpc: OtlpGrpcServer | undefined;
  const timers: NodeJS.Timeout[] = [];
  try {
    // One sink behind both receivers: the same queue, the same overload answers.
    const sink: IngestSink = {
      offer: (spans, _meta: IngestMeta) => {
        noteServerServices(spans);
        return p.offer(spans);
      },
    };
    otlp = await createOtlpServer({
      sink,
      authToken: config.authToken || undefined,
      maxBodyBytes: config.maxBodyBytes,
      maxDecompressedBytes: config.maxDecompressedBytes,
      retryAfterSeconds: config.retryAfterSeconds,
      budget,
      turns,
      requestTimeoutMs: config.requestTimeoutMs,
      headersTimeoutMs: config.headersTimeoutMs,
      maxConnections: config.maxConnections,
      onRequest: (outcome) => metrics.onOtlpRequest(outcome),
    });
    grpc = createOtlpGrpcServer({
      sink,
      budget,
      turns,
      authToken: config.authToken || undefined,
      maxBodyBytes: config.maxBodyBytes,
      maxDecompressedBytes: config.maxDecompressedBytes,
      retryAfterSeconds: config.retryAfterSeconds,
      requestTimeoutMs: config.requestTimeoutMs,
      maxConnections: config.maxConnections,
      idleTimeoutMs: config.grpcIdleTimeoutMs,
      maxConcurrentStreams: config.grpcMaxConcurrentStreams,
      onRequest: (outcome) => metrics.onOtlpRequest(outcome),
      onError: (message, err) => logger.error(message, err),
    });
    api = await createApiServer({
      store,
      lineage: (key) => engine.lineage(key),
      metrics,
      authToken: config.authToken || undefined,
      metricsAuth: config.metricsAuth,
      authFailuresPerMinute: config.authFailuresPerMinute,
      ui: { cookieSecure: config.uiCookieSecure, sessionTtlMs: config.uiSessionTtlMs, maxSessions: config.uiMaxSessions },
      peers: { urls: splitPeers(config.peers), timeoutMs: config.peerTimeoutMs },
      requestTimeoutMs: config.requestTimeoutMs,
      headersTimeoutMs: config.headersTimeoutMs,
      maxConnections: config.maxConnections,
      ready: () => ready && !p.storageFailing,
      notReadyReason: () => (p.storageFailing ? `storage: ${p.storageError ?? 'commit failed'}` : ready ? undefined : 'starting or stopping'),
    });
    const otlpAddr = await listenOrExplain(config.host, config.otlpPort, '--otlp-port', () => otlp!.listen({ host: config.host, port: config.otlpPort }));
    // Checked before the gRPC receiver starts, so that a busy port is one FORKWATCH_ERR_LISTEN line.
    await probePort(config.host, config.otlpGrpcPort, '--otlp-grpc-port');
    const grpcPort = await listenOrExplain(config.host, config.otlpGrpcPort, '--otlp-grpc-port', () => grpc!.listen(config.host, config.otlpGrpcPort));
    const grpcAddr = `${config.host.includes(':') ? `[${config.host}]` : config.host}:${grpcPort}`;
    const httpAddr = await listenOrExplain(config.host, config.httpPort, '--http-port', () => api!.listen({ host: config.host, port: config.httpPort }));
    timers.push(setInterval(() => p.tick(), config.tickIntervalMs));
    timers.push(
      setInterval(() => {
        try {
          store.prune(clock.now());
        } catch (err) {
          metrics.storageError();
          logger.error('prune failed', err);
        }
      }, PRUNE_INTERVAL_MS),
    );
    for (const t of timers) t.unref();
    ready = true;
    metrics.setReady(true);
    logger.info('detector started', { otlp: otlpAddr, otlpGrpc: grpcAddr, http: httpAddr, db: config.db, restoredSessions: restored });
    let closing: Promise<boolean> | undefined;
    return {
      otlpUrl: displayUrl(otlpAddr),
      otlpGrpcAddress: grpcAddr,
      httpUrl: displayUrl(httpAddr),
      engine,
      store,
      metrics,
      budget,
      close: () =>
        (closing ??= (async () => {
          ready = false;
          metrics.setReady(false);
          for (const t of timers) clearInterval(t);
          // Stop accepting; fastify waits for requests in flight, whose batches the pipeline commits.
          await Promise.all([otlp!.close(), grpc!.close(), api!.close()]);
          const ok = p.close();
          store.close();
          logger.info('detector stopped', { committed: ok });
          return ok;
        })()),
    };
  } catch (err) {
    for (const t of timers) clearInterval(t);
    await otlp?.close().catch(() => undefined);
    await grpc?.close().catch(() => undefined);
    await api?.close().catch(() => undefined);
    store.close();
    throw err;
  }
}

/** fastify reports `http://0.0.0.0:4318`-style or IPv6 addresses; keep them as given. */
function displayUrl(addr: string): string {
  return addr.replace(/\/$/, '');
}
