import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolRequest } from '@modelcontextprotocol/sdk/types.js';
import { createClientGuard, type ClientGuard } from './client-guard.js';
import { createForkReconnector, guardedClient, type GuardedClientOf } from './fork-reconnector.js';
import type { ConnectGuardedOptions, FetchLike } from './types.js';

/** A client that re-initializes when its guard reports a fork. */
export interface GuardedClient extends GuardedClientOf<Client, CallToolRequest['params'], RequestOptions, Awaited<ReturnType<Client['callTool']>>> {}

/**
 * Connects an SDK Client through a {@link ClientGuard} (and, when given, an instrumentation under
 * it, so the instrumentation sees the wire and the guard's drops show as `dropped`).
 */
export async function connectGuarded(options: ConnectGuardedOptions): Promise<GuardedClient> {
  const guard = options.guard ?? createClientGuard(options.guardOptions);
  const url = typeof options.url === 'string' ? new URL(options.url) : options.url;
  const baseFetch: FetchLike = (options.transportOptions?.fetch as FetchLike | undefined) ?? globalThis.fetch;
  const timeout = options.requestTimeoutMs;

  const conn = await createForkReconnector(async () => {
    const observed = options.instrumentation ? options.instrumentation.wrapFetch(baseFetch) : baseFetch;
    const fetch = guard.wrapFetch(observed);
    const transport = new StreamableHTTPClientTransport(url, { ...options.transportOptions, sessionId: undefined, fetch });
    const client = new Client(options.clientInfo, { capabilities: options.capabilities ?? {} });
    // The guard wraps client.request first, so the instrumentation (outermost) sees SessionForkError.
    guard.attach(transport, client);
    options.instrumentation?.attach(transport, client);
    await client.connect(transport, timeout !== undefined ? { timeout } : undefined);
    return { client, transport };
  }, (client) => client.close());

  return guardedClient(conn, guard, (client, params: CallToolRequest['params'], requestOptions: RequestOptions | undefined) =>
    client.callTool(params, undefined, timeout !== undefined ? { timeout, ...requestOptions } : requestOptions),
  );
}
