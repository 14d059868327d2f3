import { createServer } from 'node:net';
import { createError, ForkwatchError } from '../errors.js';

/** Why binding a port failed, in words, from a Node error (or a gRPC library's, for embedders); undefined when it was not a bind failure. */
export function bindFailure(err: unknown): string | undefined {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = typeof e?.message === 'string' ? e.message : '';
  if (code === 'EADDRINUSE' || /EADDRINUSE/.test(message)) return 'the port is already in use';
  if (code === 'EACCES' || /EACCES/.test(message)) return 'permission denied (ports below 1024 need privileges)';
  if (code === 'EADDRNOTAVAIL' || /EADDRNOTAVAIL/.test(message)) return 'the address is not one of this host';
  // grpc-js: "No address added out of total 1 resolved errors: [...]"
  if (/No address added/.test(message)) return 'no address could be bound';
  return undefined;
}

/**
 * Runs `listen`; a bind failure becomes FORKWATCH_ERR_LISTEN naming the address and the flag to
 * change, so that `serve` prints one line instead of a stack. Other failures pass through.
 */
export async function listenOrExplain<T>(host: string, port: number, flag: string, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    if (err instanceof ForkwatchError) throw err;
    const why = bindFailure(err);
    if (why === undefined) throw err;
    const e = createError('FORKWATCH_ERR_LISTEN', hostPort(host, port), why, flag);
    e.cause = err;
    throw e;
  }
}

/**
 * Binds and closes a plain TCP server on `host:port` (port 0 always passes): lets a caller report
 * a busy port before handing it to code that would report the failure its own way.
 */
export async function probePort(host: string, port: number, flag: string): Promise<void> {
  if (port === 0) return;
  await listenOrExplain(host, port, flag, () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen({ host, port, exclusive: true }, () => s.close(() => resolve()));
    }),
  );
}

function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}
