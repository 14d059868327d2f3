import { context, propagation, trace, type MeterProvider, type TracerProvider } from '@opentelemetry/api';
import { argsDigest } from '../../common/args-digest.js';
import { componentLogger } from '../../common/logger.js';
import { DEFAULT_REISSUE_WINDOW_MS } from '../../common/recent-shapes.js';
import { HandledReporter, type HandledCall } from '../../common/handled-reporter.js';
import { TRACER_NAME, TRACER_VERSION } from '../../common/span-emitter.js';
import { ServerOperations } from '../../conventional/server-operations.js';

/** Options of {@link observeStatelessServers}. */
export interface StatelessServerOptions {
  /** Default: the global tracer provider. */
  tracerProvider?: TracerProvider;
  /** A call repeating (method, tool, argument digest) one whose stream closed within this long emits its span too, ms. Default 30000. */
  reissueWindowMs?: number;
  /** 0: emit `request.handled` for every request. Default: only when it can matter (docs/telemetry.md). */
  requestSpanDelayMs?: number;
  /**
   * Also emit the OpenTelemetry MCP conventions' SERVER span and `mcp.server.operation.duration`
   * point per request (as `createServerInstrumentation`'s `mcpSemconv`; docs/telemetry.md). Default false.
   */
  mcpSemconv?: boolean;
  /** Meter provider of the `mcpSemconv` histogram. Default: the global one of `@opentelemetry/api`. */
  meterProvider?: MeterProvider;
}

interface Call extends HandledCall {
  signal?: AbortSignal;
}

type Handler = (request: { method: string; id?: unknown; params?: Record<string, unknown> }, ctx: { mcpReq?: { signal?: AbortSignal; notify?: unknown; send?: unknown } }) => unknown;
interface ProtocolLike {
  _requestHandlers?: Map<string, Handler>;
}
interface TransportLike {
  send(message: unknown, options?: { relatedRequestId?: unknown }): Promise<void>;
}
interface ServerLike {
  connect(transport: TransportLike): Promise<void>;
  server?: ProtocolLike;
}

/** Where a 2026-07-28 request names its protocol revision (its `_meta` envelope). */
const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';

const metaGetter = {
  keys: (c: Record<string, unknown>) => Object.keys(c),
  get: (c: Record<string, unknown>, k: string) => (typeof c[k] === 'string' ? (c[k] as string) : undefined),
};

/**
 * Wraps the server factory given to SDK 2.x `createMcpHandler` (stateless): every request a
 * per-request server handles is watched from the moment its handler starts until it returns, and
 * `forkwatch.request.handled` says what it did when that can matter (its stream closed first, it
 * sent messages after the close, or it repeats a call whose stream closed). The span joins the
 * trace named by `params._meta.traceparent`. Reads SDK internals defensively and never throws
 * into the app: on an SDK whose internals differ, it observes nothing.
 */
export function observeStatelessServers<F extends (...args: never[]) => unknown>(factory: F, options: StatelessServerOptions = {}): F {
  const log = componentLogger('server-stateless');
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(TRACER_NAME, TRACER_VERSION);
  // Stateless: no session id, so no salt and no raw id to guard.
  const conventional = options.mcpSemconv === true
    ? new ServerOperations({ tracerProvider: options.tracerProvider, meterProvider: options.meterProvider, salt: '', recordRawSessionId: false, logger: log })
    : undefined;

  const reporter = new HandledReporter(tracer, log, options.reissueWindowMs ?? DEFAULT_REISSUE_WINDOW_MS, options.requestSpanDelayMs === 0);
  const emit = (c: Call, outcome: string): void => reporter.report(c, outcome);

  const hook = (server: ServerLike, transport: TransportLike): void => {
    const protocol = (server.server ?? server) as ProtocolLike;
    const handlers = protocol._requestHandlers;
    if (!(handlers instanceof Map)) return;
    const calls = new Map<string, Call>();
    for (const [method, h] of handlers) {
      if (typeof h !== 'function' || method === 'initialize' || method === 'ping') continue;
      handlers.set(method, function (this: unknown, request, ctx) {
        let call: Call | undefined;
        try {
          const params = request.params ?? {};
          const meta = params._meta && typeof params._meta === 'object' ? (params._meta as Record<string, unknown>) : {};
          call = {
            method,
            id: String(request.id),
            tool: method === 'tools/call' && typeof params.name === 'string' ? params.name : undefined,
            digest: argsDigest(params),
            startMs: Date.now(),
            signal: ctx?.mcpReq?.signal,
            afterClose: 0,
            parent: propagation.extract(context.active(), meta, metaGetter),
          };
          // The SDK lifts the envelope out of `_meta` before the handler (ctx.mcpReq.envelope).
          const envelope = (ctx?.mcpReq as { envelope?: unknown } | undefined)?.envelope;
          const pv = (envelope !== null && typeof envelope === 'object' ? (envelope as Record<string, unknown>)[META_PROTOCOL_VERSION] : undefined) ?? meta[META_PROTOCOL_VERSION];
          if (typeof pv === 'string' && pv.length <= 64) call.protocolVersion = pv;
          const c = call;
          calls.set(c.id, c);
          // SDK 2.x drops what a handler sends after its stream closed before the transport sees it:
          // count the attempts where the handler makes them.
          const mcpReq = ctx?.mcpReq as Record<string, unknown> | undefined;
          for (const k of ['notify', 'send'] as const) {
            const fn = mcpReq?.[k];
            if (typeof fn !== 'function') continue;
            mcpReq![k] = function (this: unknown, ...a: unknown[]) {
              if (c.closedAtMs !== undefined) c.afterClose++;
              return (fn as (...x: unknown[]) => unknown).apply(this, a);
            };
          }
          if (c.signal?.aborted) c.closedAtMs = c.startMs;
          else c.signal?.addEventListener('abort', () => (c.closedAtMs ??= Date.now()), { once: true });
        } catch (err) {
          log.debug('request hook failed', err);
        }
        const done = (outcome: string): void => {
          if (call === undefined) return;
          calls.delete(call.id);
          emit(call, outcome);
        };
        let result: unknown;
        try {
          result = h.call(this, request, ctx);
        } catch (err) {
          done(call?.signal?.aborted ? 'cancelled' : 'error');
          throw err;
        }
        return Promise.resolve(result).then(
          (r) => {
            // McpServer turns a tool's throw into a result with isError: the tool did not complete.
            const failed = r !== null && typeof r === 'object' && (r as { isError?: unknown }).isError === true;
            // A result produced after the close is one more message nobody will read.
            if (!failed && call?.closedAtMs !== undefined) call.afterClose++;
            done(failed ? (call?.signal?.aborted ? 'cancelled' : 'error') : 'completed');
            return r;
          },
          (err: unknown) => {
            done(call?.signal?.aborted ? 'cancelled' : 'error');
            throw err;
          },
        );
      });
    }
    const origSend = transport.send;
    transport.send = function (this: unknown, message, opts) {
      try {
        const m = message as { id?: unknown; method?: unknown };
        const rid = opts?.relatedRequestId ?? (m.method === undefined ? m.id : undefined);
        const c = rid !== undefined ? calls.get(String(rid)) : undefined;
        // Sends the handler did not make itself (hooked above) that still reach the transport.
        if (c?.closedAtMs !== undefined && opts?.relatedRequestId === undefined) c.afterClose++;
      } catch {
        // observing must not break sending
      }
      return origSend.call(this, message, opts);
    };
  };

  return function (this: unknown, ...args: never[]) {
    const made = factory.apply(this, args);
    const wrap = (server: unknown): unknown => {
      try {
        const s = server as ServerLike;
        const origConnect = s.connect;
        s.connect = async function (this: unknown, transport: TransportLike) {
          await origConnect.call(this, transport);
          try {
            hook(s, transport);
            if (conventional !== undefined) conventional.hookTransport(transport as unknown as Parameters<ServerOperations['hookTransport']>[0]);
          } catch (err) {
            log.debug('stateless hook failed', err);
          }
        };
      } catch (err) {
        log.debug('stateless wrap failed', err);
      }
      return server;
    };
    return made instanceof Promise ? made.then(wrap) : wrap(made);
  } as F;
}
