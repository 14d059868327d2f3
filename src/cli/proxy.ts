import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { createError } from '../errors.js';
import {
  createForkwatchProxy,
  DEFAULT_CLIENT_HEADERS_TIMEOUT_MS,
  DEFAULT_CLIENT_REQUEST_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_GUARD_HOLD_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_INITIALIZE_BYTES,
  DEFAULT_MAX_PARSE_BYTES,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_PROXY_HOST,
  DEFAULT_PROXY_PORT,
  DEFAULT_SESSION_IDLE_TTL_MS,
  DEFAULT_STREAM_IDLE_TIMEOUT_MS,
  DEFAULT_UPSTREAM_MAX_SOCKETS,
  resolveProxyOptions,
  type ProxyOptions,
} from '../proxy/index.js';

/** `service.name` when neither `--service-name` nor OTEL_SERVICE_NAME says. */
export const DEFAULT_PROXY_SERVICE_NAME = 'forkwatch-proxy';

export const PROXY_USAGE = `forkwatch proxy --upstream URL [flags]

A sidecar reverse proxy in front of one MCP Streamable HTTP server (any language, unchanged).
Passes POST/GET/DELETE through (SSE event by event, never buffered whole; bytes unchanged unless
--guard) and emits forkwatch's server-side spans from what crosses the wire (docs/proxy.md).

  --upstream URL                 the MCP server, http://host:port (required; paths are kept)
  --host HOST                    listen interface (default ${DEFAULT_PROXY_HOST})
  --port N                       listen port, 0 = ephemeral (default ${DEFAULT_PROXY_PORT})
  --guard                        enforce the resume decision boundary: a forked or regressing
                                 answer, or one under another session id, becomes 404/-32001;
                                 mint Mcp-Session-Incarnation per session (default off)
  --otlp-endpoint URL            OTLP/HTTP base URL (…/v1/traces is added); default: the standard
                                 OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT/HEADERS/PROTOCOL env
  --service-name NAME            resource service.name, use the server's (default
                                 OTEL_SERVICE_NAME, else ${DEFAULT_PROXY_SERVICE_NAME})
  --guard-hold-ms N              how long --guard holds a resume's answer for its first event
                                 (default ${DEFAULT_GUARD_HOLD_MS})
  --connect-timeout-ms N         TCP connect to the upstream; 502 past it (default ${DEFAULT_CONNECT_TIMEOUT_MS})
  --headers-timeout-ms N         upstream status line; 504 past it (default ${DEFAULT_HEADERS_TIMEOUT_MS})
  --stream-idle-timeout-ms N     close an answer body silent this long (default ${DEFAULT_STREAM_IDLE_TIMEOUT_MS})
  --max-sessions N               sessions tracked; least recently used forgotten (default ${DEFAULT_MAX_SESSIONS})
  --session-idle-ttl-ms N        forget a session idle this long (default ${DEFAULT_SESSION_IDLE_TTL_MS})
  --max-event-chars N            larger SSE events pass through unrecorded (default 1048576)
  --max-tracked-event-ids N      event ids remembered per session (default 1024)
  --max-parse-bytes N            largest body copied aside to read JSON-RPC ids (default ${DEFAULT_MAX_PARSE_BYTES})
  --max-connections N            client connections at once (default ${DEFAULT_MAX_CONNECTIONS})
  --client-request-timeout-ms N  receive a whole client request within this; 408 past it (default ${DEFAULT_CLIENT_REQUEST_TIMEOUT_MS})
  --client-headers-timeout-ms N  receive a client request's headers within this (default ${DEFAULT_CLIENT_HEADERS_TIMEOUT_MS})
  --max-initialize-bytes N       --guard: largest initialize answer held to add the incarnation;
                                 a larger one is refused 502 (default ${DEFAULT_MAX_INITIALIZE_BYTES})
  --upstream-max-sockets N       keep-alive sockets to the upstream (default ${DEFAULT_UPSTREAM_MAX_SOCKETS})
  --request-span-delay-ms N      a request answered within this emits no span (default 1000)
  --record-raw-session-id        also record raw session ids (mcp.session.id); off: they are credentials

Environment: FORKWATCH_SESSION_SALT (the fleet's salt, as on the clients), OTEL_SERVICE_NAME,
OTEL_EXPORTER_OTLP_*. SIGTERM/SIGINT: stop accepting, close streams, flush spans, exit 0.`;

const NUMBERS: Record<string, keyof ProxyOptions> = {
  '--port': 'port',
  '--guard-hold-ms': 'guardHoldMs',
  '--connect-timeout-ms': 'connectTimeoutMs',
  '--headers-timeout-ms': 'headersTimeoutMs',
  '--stream-idle-timeout-ms': 'streamIdleTimeoutMs',
  '--max-sessions': 'maxSessions',
  '--session-idle-ttl-ms': 'sessionIdleTtlMs',
  '--max-event-chars': 'maxEventChars',
  '--max-tracked-event-ids': 'maxTrackedEventIds',
  '--max-parse-bytes': 'maxParseBytes',
  '--max-connections': 'maxConnections',
  '--max-initialize-bytes': 'maxInitializeBytes',
  '--client-request-timeout-ms': 'clientRequestTimeoutMs',
  '--client-headers-timeout-ms': 'clientHeadersTimeoutMs',
  '--upstream-max-sockets': 'upstreamMaxSockets',
  '--request-span-delay-ms': 'requestSpanDelayMs',
};

export interface ProxyFlags {
  options: ProxyOptions;
  otlpEndpoint?: string;
  serviceName?: string;
}

/** Parses `forkwatch proxy` flags; throws FORKWATCH_ERR_CLI_USAGE with a one-line reason. */
export function parseProxyFlags(argv: string[]): ProxyFlags {
  const o: Partial<ProxyOptions> = {};
  const flags: ProxyFlags = { options: o as ProxyOptions };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      const v = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (v === undefined || v === '') throw createError('FORKWATCH_ERR_CLI_USAGE', `proxy: ${name} needs a value`);
      return v;
    };
    const key = NUMBERS[name];
    if (key !== undefined) {
      const raw = value();
      const n = Number(raw);
      if (!/^[0-9]+$/.test(raw) || !Number.isSafeInteger(n)) throw createError('FORKWATCH_ERR_CLI_USAGE', `proxy: ${name} must be a whole number, got ${JSON.stringify(raw)}`);
      (o as Record<string, number>)[key] = n;
      continue;
    }
    switch (name) {
      case '--upstream':
        o.upstream = value();
        break;
      case '--host':
        o.host = value();
        break;
      case '--guard':
        o.guard = true;
        break;
      case '--record-raw-session-id':
        o.recordRawSessionId = true;
        break;
      case '--otlp-endpoint':
        flags.otlpEndpoint = value().replace(/\/+$/, '').replace(/\/v1\/traces$/, '');
        break;
      case '--service-name':
        flags.serviceName = value();
        break;
      default:
        throw createError('FORKWATCH_ERR_CLI_USAGE', `proxy: unknown ${name.startsWith('-') ? 'flag' : 'argument'} ${name} (try forkwatch proxy --help)`);
    }
  }
  if (o.upstream === undefined) throw createError('FORKWATCH_ERR_CLI_USAGE', 'proxy: --upstream URL is required (try forkwatch proxy --help)');
  return flags;
}

async function exporterFor(endpoint: string | undefined, env: NodeJS.ProcessEnv): Promise<SpanExporter | undefined> {
  if (endpoint === undefined && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT && !env.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  // Only the exporter in use is loaded: the sidecar's idle memory is part of what it costs.
  const { OTLPTraceExporter: Exporter } = protocol === 'http/json' ? await import('@opentelemetry/exporter-trace-otlp-http') : await import('@opentelemetry/exporter-trace-otlp-proto');
  if (endpoint !== undefined) return new Exporter({ url: `${endpoint}/v1/traces` });
  // The exporters read the standard variables themselves (endpoint, headers, timeout).
  return new Exporter();
}

/** `forkwatch proxy`: runs until SIGTERM/SIGINT, then closes and flushes; resolves 0. */
export async function runProxy(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const flags = parseProxyFlags(argv);
  // Bad values exit 2 before anything else is said or started.
  resolveProxyOptions(flags.options);
  const exporter = await exporterFor(flags.otlpEndpoint, env);
  const serviceName = flags.serviceName ?? env.OTEL_SERVICE_NAME ?? DEFAULT_PROXY_SERVICE_NAME;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: exporter ? [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 200 })] : [],
  });
  if (!exporter) process.stderr.write('forkwatch proxy: no --otlp-endpoint nor OTEL_EXPORTER_OTLP_ENDPOINT: spans are not exported\n');
  const proxy = await createForkwatchProxy({ ...flags.options, tracerProvider: provider, salt: flags.options.salt ?? env.FORKWATCH_SESSION_SALT ?? '' });
  process.stdout.write(`forkwatch proxy listening url=${proxy.url} upstream=${proxy.options.upstreamUrl.href} guard=${proxy.options.guard}\n`);
  return new Promise<number>((resolve) => {
    const stop = (): void => {
      void (async () => {
        await proxy.close().catch(() => {});
        await provider.forceFlush().catch(() => {});
        await provider.shutdown().catch(() => {});
        process.stderr.write(`forkwatch proxy stopped ${JSON.stringify(proxy.stats())}\n`);
        resolve(0);
      })();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
