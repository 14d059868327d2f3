import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  type StreamableHTTPReconnectionOptions,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TracerProvider } from '@opentelemetry/api';
import { connectGuarded, createClientGuard, createClientInstrumentation } from '@forkwatch/instrumentation/client';
import { naiveDedupFetch, type DroppedEvent } from './naive-dedup.js';
import { SLOW_REPORT_TOOL } from './slow-report-tool.js';
import { describeError } from './describe-error.js';
import type { FetchLike } from './fetch-types.js';
import type { ErrorRecord, ScenarioClient } from './types.js';

export interface AppClientOptions {
  /** MCP endpoint (the proxy's). */
  url: string;
  /** Network fetch under everything the app stacks on it. */
  fetch: FetchLike;
  /** SDK `initialReconnectionDelay`, ms. */
  reconnectDelayMs: number;
  /** Per-call timeout, ms. */
  requestTimeoutMs: number;
  /** When set, the client side is instrumented with forkwatch. */
  tracerProvider?: TracerProvider;
  salt?: string;
  /** Client instrumentation's `deliveryTimeoutMs`, ms. Default: the instrumentation's. */
  deliveryTimeoutMs?: number;
  /** SessionForkErrors a guarded client's guard raised. */
  onFork?: (e: ErrorRecord) => void;
  /** Errors reported on the client's `onerror` (transport errors). */
  onTransportError?: (e: ErrorRecord) => void;
}

/** The seed's app as the scenario drives it: connect, call the slow tool, close. */
export interface AppClient {
  /** Calls slow_report with a progressToken; resolves with the result text. */
  callTool(topic: string, onProgress: () => void): Promise<string>;
  /** What the app's naive dedup discarded (empty for a guarded client, which has none). */
  droppedByDedup(): DroppedEvent[];
  close(): Promise<void>;
}

const CLIENT_INFO = { name: 'forkwatch-demo-app', version: '0.1.0' };

/** Connects the seed's app: `stock` = SDK client + the app's naive dedup; `guarded` = forkwatch's connectGuarded. */
export async function createAppClient(kind: ScenarioClient, opts: AppClientOptions): Promise<AppClient> {
  return kind === 'stock' ? connectStock(opts) : connectGuardedApp(opts);
}

function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? '').join('');
}

async function connectStock(opts: AppClientOptions): Promise<AppClient> {
  // The instrumentation sits under the app's dedup, on the wire, and learns from attach() what
  // reached the SDK: the difference is what the dedup dropped.
  const instr = opts.tracerProvider
    ? createClientInstrumentation({ tracerProvider: opts.tracerProvider, salt: opts.salt ?? '', deliveryTimeoutMs: opts.deliveryTimeoutMs })
    : undefined;
  const dedup = naiveDedupFetch(instr ? instr.wrapFetch(opts.fetch) : opts.fetch);
  const transport = new StreamableHTTPClientTransport(new URL(opts.url), {
    fetch: dedup.fetch,
    reconnectionOptions: reconnection(opts.reconnectDelayMs),
  });
  const client = new Client(CLIENT_INFO);
  client.onerror = (err) => opts.onTransportError?.({ source: 'transport', ...describeError(err) });
  instr?.attach(transport, client);
  await client.connect(transport, { timeout: opts.requestTimeoutMs });
  return {
    callTool: async (topic, onProgress) =>
      textOf(
        await client.callTool({ name: SLOW_REPORT_TOOL, arguments: { topic } }, undefined, {
          timeout: opts.requestTimeoutMs,
          onprogress: onProgress,
        }),
      ),
    droppedByDedup: () => dedup.dropped,
    close: () => client.close(),
  };
}

async function connectGuardedApp(opts: AppClientOptions): Promise<AppClient> {
  const common = { tracerProvider: opts.tracerProvider, salt: opts.salt ?? '' };
  const guard = createClientGuard(common);
  guard.onFork((err) => opts.onFork?.({ source: 'transport', ...describeError(err) }));
  // Under the guard, the instrumentation sees the wire; what the guard discards shows as dropped.
  const instr = opts.tracerProvider
    ? createClientInstrumentation({ ...common, guarded: true, deliveryTimeoutMs: opts.deliveryTimeoutMs })
    : undefined;
  const guarded = await connectGuarded({
    url: opts.url,
    clientInfo: CLIENT_INFO,
    transportOptions: { fetch: opts.fetch, reconnectionOptions: reconnection(opts.reconnectDelayMs) },
    instrumentation: instr,
    guard,
    requestTimeoutMs: opts.requestTimeoutMs,
  });
  return {
    callTool: async (topic, onProgress) =>
      textOf(await guarded.callTool({ name: SLOW_REPORT_TOOL, arguments: { topic } }, { onprogress: onProgress })),
    droppedByDedup: () => [],
    close: () => guarded.close(),
  };
}

/** The SDK's reconnection options with the scenario's backoff (its `initialReconnectionDelay`). */
function reconnection(delayMs: number): StreamableHTTPReconnectionOptions {
  return { initialReconnectionDelay: delayMs, maxReconnectionDelay: delayMs * 4, reconnectionDelayGrowFactor: 1.5, maxRetries: 2 };
}
