import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolRequest } from '@modelcontextprotocol/sdk/types.js';
import { createClientGuard, type ClientGuard } from './client-guard.js';
import { createForkReconnector } from './fork-reconnector.js';
import type { ConnectGuardedOptions, FetchLike } from './types.js';

/** A client that re-initializes when its guard reports a fork. */
export interface GuardedClient {
  /** The current SDK Client (replaced by every reconnect). */
  readonly client: Client;
  /** The guard in use (its `onFork` listeners survive reconnects). */
  readonly guard: ClientGuard;
  /** Session id of the current connection. */
  readonly sessionId: string | undefined;
  /** Incarnation the guard holds for the current session, when the server sent one. */
  readonly incarnation: string | undefined;
  /**
   * `client.callTool`; on a SessionForkError of any kind, reconnects (fresh transport and
   * `initialize`) and retries the call once. Other errors propagate unchanged.
   */
  callTool(params: CallToolRequest['params'], options?: RequestOptions): ReturnType<Client['callTool']>;
  /** Drops the current connection and initializes a new session. */
  reconnect(): Promise<void>;
  close(): Promise<void>;
}

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

  return {
    get client() {
      return conn.current.client;
    },
    guard,
    get sessionId() {
      return conn.current.transport.sessionId;
    },
    get incarnation() {
      return guard.incarnationOf(conn.current.transport);
    },
    callTool(params, requestOptions) {
      const opts: RequestOptions | undefined = timeout !== undefined ? { timeout, ...requestOptions } : requestOptions;
      return conn.retryOnFork((client) => client.callTool(params, undefined, opts));
    },
    reconnect: () => conn.reconnect(),
    close: () => conn.close(),
  };
}
