import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { ClientGuard } from '../client-guard.js';
import { createClientGuard } from '../client-guard.js';
import type { ClientInstrumentation } from '../client-instrumentation.js';
import { createForkReconnector, guardedClient, type GuardedClientOf } from '../fork-reconnector.js';
import type { ClientGuardOptions, FetchLike } from '../types.js';

type CallToolParams = Parameters<Client['callTool']>[0];
type CallToolOptions = Parameters<Client['callTool']>[1];
type TransportOptions = NonNullable<ConstructorParameters<typeof StreamableHTTPClientTransport>[1]>;

/** {@link connectGuarded} options (SDK 2.x). */
export interface ConnectGuardedV2Options {
  url: string | URL;
  clientInfo: ConstructorParameters<typeof Client>[0];
  /** Passed to each new Client (e.g. `capabilities`, `versionNegotiation`). */
  clientOptions?: ConstructorParameters<typeof Client>[1];
  /** Passed to each new StreamableHTTPClientTransport; its `fetch` becomes the innermost fetch. */
  transportOptions?: TransportOptions;
  /** Instrumentation placed under the guard (sees the wire). Default: none. */
  instrumentation?: ClientInstrumentation;
  /** Guard to use. Default: a new guard from `guardOptions`. */
  guard?: ClientGuard;
  guardOptions?: ClientGuardOptions;
  /** Default per-request timeout for callTool, ms. Default: the SDK's (60000). */
  requestTimeoutMs?: number;
}

/** A 2.x client that re-initializes when its guard reports a fork (or a 404 the SDK would ignore). */
export interface GuardedClientV2 extends GuardedClientOf<Client, CallToolParams, CallToolOptions, Awaited<ReturnType<Client['callTool']>>> {}

/**
 * Connects an SDK 2.x Client (2025 `initialize` handshake, the default `versionNegotiation`)
 * through a {@link ClientGuard}: the guard's decisions and `SessionForkError`s are those of 1.x.
 */
export async function connectGuarded(options: ConnectGuardedV2Options): Promise<GuardedClientV2> {
  const guard = options.guard ?? createClientGuard(options.guardOptions);
  const url = typeof options.url === 'string' ? new URL(options.url) : options.url;
  const baseFetch: FetchLike = (options.transportOptions?.fetch as FetchLike | undefined) ?? globalThis.fetch;
  const timeout = options.requestTimeoutMs;

  const conn = await createForkReconnector(async () => {
    const observed = options.instrumentation ? options.instrumentation.wrapFetch(baseFetch) : baseFetch;
    const fetch = guard.wrapFetch(observed);
    const transport = new StreamableHTTPClientTransport(url, { ...options.transportOptions, sessionId: undefined, fetch: fetch as TransportOptions['fetch'] });
    const client = new Client(options.clientInfo, options.clientOptions);
    // The guard and the instrumentation read the transport's fetch and the client's request():
    // both exist under the same names in 2.x.
    guard.attach(transport as never, client as never);
    options.instrumentation?.attach(transport as never, client as never);
    await client.connect(transport, timeout !== undefined ? { timeout } : undefined);
    return { client, transport };
  }, (client) => client.close());

  return guardedClient(conn, guard, (client, params: CallToolParams, callOptions: CallToolOptions | undefined) =>
    client.callTool(params, (timeout !== undefined ? { timeout, ...callOptions } : callOptions) as CallToolOptions),
  );
}
