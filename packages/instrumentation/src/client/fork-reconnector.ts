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
