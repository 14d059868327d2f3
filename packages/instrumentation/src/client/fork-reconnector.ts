import type { ClientGuard } from './client-guard.js';
import { isSessionForkError } from './session-fork-error.js';

/** One open connection: an SDK Client and its transport, of whichever SDK major. */
export interface OpenConnection<C, T> {
  client: C;
  transport: T;
}

/** Keeps one live connection and replaces it, once per fork, for every call that hit the fork. */
export interface ForkReconnector<C, T> {
  readonly current: OpenConnection<C, T>;
  /**
   * Runs `call` on the current client; on a SessionForkError, reconnects (fresh transport and
   * `initialize`) and runs it once more. Other errors propagate unchanged.
   */
  retryOnFork<R>(call: (client: C) => Promise<R>): Promise<R>;
  /** Drops the current connection and opens a new one. */
  reconnect(): Promise<void>;
  /** Closes the current connection; a broken one closes silently. */
  close(): Promise<void>;
}

/**
 * The reconnect logic shared by the 1.x and 2.x `connectGuarded`: only how a connection is opened
 * and closed differs between the SDK majors.
 */
export async function createForkReconnector<C, T>(
  open: () => Promise<OpenConnection<C, T>>,
  closeClient: (client: C) => Promise<void>,
): Promise<ForkReconnector<C, T>> {
  let current = await open();
  /** Bumped by every reconnect: a call that failed on an older connection just retries. */
  let generation = 0;
  let reopening: Promise<void> | undefined;

  const drop = async (): Promise<void> => {
    try {
      await closeClient(current.client);
    } catch {
      // The old connection is forked or gone: nothing to tell it.
    }
  };

  // One fork fails every pending call at once: they share one reconnect instead of each opening
  // (and leaking) a session of its own.
  const reconnectAfter = async (failedOn: number): Promise<void> => {
    if (failedOn !== generation) return;
    reopening ??= (async () => {
      try {
        await drop();
        current = await open();
        generation++;
      } finally {
        reopening = undefined;
      }
    })();
    await reopening;
  };

  return {
    get current() {
      return current;
    },
    async retryOnFork(call) {
      const failedOn = generation;
      try {
        return await call(current.client);
      } catch (err) {
        if (!isSessionForkError(err)) throw err;
        await reconnectAfter(failedOn);
        return await call(current.client);
      }
    },
    reconnect: () => reconnectAfter(generation),
    close: drop,
  };
}

/** What `connectGuarded` returns, for either SDK major: `C` its Client, `P`/`O`/`R` callTool's params, options and resolved result. */
export interface GuardedClientOf<C, P, O, R> {
  /** The current SDK Client (replaced by every reconnect). */
  readonly client: C;
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
  callTool(params: P, options?: O): Promise<R>;
  /** Drops the current connection and initializes a new session. */
  reconnect(): Promise<void>;
  close(): Promise<void>;
}

/** The guarded client over a reconnector; `callTool` says how this SDK major calls a tool. */
export function guardedClient<C, T extends { sessionId?: string | undefined }, P, O, R>(
  conn: ForkReconnector<C, T>,
  guard: ClientGuard,
  callTool: (client: C, params: P, options: O | undefined) => Promise<R>,
): GuardedClientOf<C, P, O, R> {
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
    callTool: (params, options) => conn.retryOnFork((client) => callTool(client, params, options)),
    reconnect: () => conn.reconnect(),
    close: () => conn.close(),
  };
}
