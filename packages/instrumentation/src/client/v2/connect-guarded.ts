import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { ClientGuard } from '../client-guard.js';
import { createClientGuard } from '../client-guard.js';
import type { ClientInstrumentation } from '../client-instrumentation.js';
import { isSessionForkError } from '../session-fork-error.js';
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
export interface GuardedClientV2 {
  /** The current SDK Client (replaced by every reconnect). */
  readonly client: Client;
  readonly guard: ClientGuard;
  readonly sessionId: string | undefined;
  readonly incarnation: string | undefined;
  /** `client.callTool`; on a SessionForkError, reconnects (fresh transport, `initialize`) and retries once. */
  callTool(params: CallToolParams, options?: CallToolOptions): ReturnType<Client['callTool']>;
  reconnect(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Connects an SDK 2.x Client (2025 `initialize` handshake, the default `versionNegotiation`)
 * through a {@link ClientGuard}: the guard's decisions and `SessionForkError`s are those of 1.x.
 */
export async function connectGuarded(options: ConnectGuardedV2Options): Promise<GuardedClientV2> {
  const guard = options.guard ?? createClientGuard(options.guardOptions);
  const url = typeof options.url === 'string' ? new URL(options.url) : options.url;
  const baseFetch: FetchLike = (options.transportOptions?.fetch as FetchLike | undefined) ?? globalThis.fetch;
  const timeout = options.requestTimeoutMs;
  let client!: Client;
  let transport!: StreamableHTTPClientTransport;
  let generation = 0;
  let reopening: Promise<void> | undefined;

  const open = async (): Promise<void> => {
    const observed = options.instrumentation ? options.instrumentation.wrapFetch(baseFetch) : baseFetch;
    const fetch = guard.wrapFetch(observed);
    const t = new StreamableHTTPClientTransport(url, { ...options.transportOptions, sessionId: undefined, fetch: fetch as TransportOptions['fetch'] });
    const c = new Client(options.clientInfo, options.clientOptions);
    // The guard and the instrumentation read the transport's fetch and the client's request():
    // both exist under the same names in 2.x.
    guard.attach(t as never, c as never);
    options.instrumentation?.attach(t as never, c as never);
    await c.connect(t, timeout !== undefined ? { timeout } : undefined);
    client = c;
    transport = t;
  };
  const drop = async (): Promise<void> => {
    try {
      await client.close();
    } catch {
      // closing a broken connection may fail; the next open() replaces it anyway
    }
  };
  // One fork fails every pending call at once: they share one reconnect.
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
      return guard.incarnationOf(transport as never);
    },
    async callTool(params, callOptions) {
      const opts = (timeout !== undefined ? { timeout, ...callOptions } : callOptions) as CallToolOptions;
      const failedOn = generation;
      try {
        return await client.callTool(params, opts);
      } catch (err) {
        if (!isSessionForkError(err)) throw err;
        await reconnectAfter(failedOn);
        return await client.callTool(params, opts);
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
