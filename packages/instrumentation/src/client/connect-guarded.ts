import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolRequest } from '@modelcontextprotocol/sdk/types.js';
import { createClientGuard, type ClientGuard } from './client-guard.js';
import { isSessionForkError } from './session-fork-error.js';
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
  let client!: Client;
  let transport!: StreamableHTTPClientTransport;
  /** Bumped by every reconnect: a call that failed on an older connection just retries. */
  let generation = 0;
  let reopening: Promise<void> | undefined;

  const open = async (): Promise<void> => {
    const observed = options.instrumentation ? options.instrumentation.wrapFetch(baseFetch) : baseFetch;
    const fetch = guard.wrapFetch(observed);
    const t = new StreamableHTTPClientTransport(url, { ...options.transportOptions, sessionId: undefined, fetch });
    const c = new Client(options.clientInfo, { capabilities: options.capabilities ?? {} });
    // The guard wraps client.request first, so the instrumentation (outermost) sees SessionForkError.
    guard.attach(t, c);
    options.instrumentation?.attach(t, c);
    await c.connect(t, timeout !== undefined ? { timeout } : undefined);
    client = c;
    transport = t;
  };

  const drop = async (): Promise<void> => {
    try {
      await client.close();
    } catch {
      // The old connection is forked or gone: nothing to tell it.
    }
  };

  /**
   * One fork fails every pending call at once: they share one reconnect instead of each opening
   * (and leaking) a session of its own.
   */
  const reconnectAfter = async (failedOn: number): Promise<void> => {
    if (failedOn !== generation) return;
    reopening ??= (async () => {
      try {
        await drop();
        await open();
        generation++;
      } finally {
        reopening = undefined;
      }
    })();
    await reopening;
  };

  await open();

  return {
    get client() {
      return client;
    },
    guard,
    get sessionId() {
      return transport.sessionId;
    },
    get incarnation() {
      return guard.incarnationOf(transport);
    },
    async callTool(params, requestOptions) {
      const opts: RequestOptions | undefined = timeout !== undefined ? { timeout, ...requestOptions } : requestOptions;
      const failedOn = generation;
      try {
        return await client.callTool(params, undefined, opts);
      } catch (err) {
        if (!isSessionForkError(err)) throw err;
        await reconnectAfter(failedOn);
        return await client.callTool(params, undefined, opts);
      }
    },
    async reconnect() {
      await reconnectAfter(generation);
    },
    async close() {
      await drop();
    },
  };
}
