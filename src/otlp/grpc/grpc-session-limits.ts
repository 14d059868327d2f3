import type { Http2Server, ServerHttp2Session } from 'node:http2';

/** The connection-level limits of the OTLP/gRPC port (its HTTP/2 sessions). */
export interface GrpcSessionLimits {
  /** Open connections at once; further ones are closed on accept (as on the HTTP ports). */
  maxConnections: number;
  /**
   * A connection with no call open for this long is sent GOAWAY and closed, ms. Counted from
   * the last call's end (or the accept), not from the last frame: PINGs do not keep it open.
   */
  idleTimeoutMs: number;
}

export interface GrpcSessions {
  /** Connections open now. */
  readonly open: number;
  /** GOAWAY to every connection; resolves once their calls have finished and they are closed. */
  closeAll(): Promise<void>;
}

/**
 * Applies {@link GrpcSessionLimits} to an HTTP/2 server and tracks its sessions so that close can
 * wait for them: grpc-js's server had neither a connection limit nor an idle timeout, and 1,100
 * idle connections (or 200 stalled calls) stayed open for as long as their clients liked.
 */
export function limitGrpcSessions(server: Http2Server, limits: GrpcSessionLimits): GrpcSessions {
  server.maxConnections = limits.maxConnections;
  const sessions = new Set<ServerHttp2Session>();

  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    let calls = 0;
    let idle: NodeJS.Timeout | undefined;
    const armIdle = (): void => {
      idle = setTimeout(() => {
        // Graceful: GOAWAY tells the client to open a new connection for its next call.
        if (!session.closed && !session.destroyed) session.close();
        // A client that never acknowledges (or keeps the socket half open) is cut after a grace.
        setTimeout(() => session.destroy(), Math.min(limits.idleTimeoutMs, 5_000)).unref();
      }, limits.idleTimeoutMs);
      idle.unref();
    };
    armIdle();
    session.on('stream', (stream) => {
      calls++;
      if (idle !== undefined) clearTimeout(idle);
      idle = undefined;
      stream.once('close', () => {
        if (--calls === 0 && !session.closed && !session.destroyed) armIdle();
      });
    });
    // A client's protocol error or reset ends its own session only.
    session.on('error', () => undefined);
    session.once('close', () => {
      if (idle !== undefined) clearTimeout(idle);
      sessions.delete(session);
    });
  });

  return {
    get open() {
      return sessions.size;
    },
    closeAll: () =>
      Promise.all(
        [...sessions].map(
          (s) =>
            new Promise<void>((resolve) => {
              if (s.destroyed) return resolve();
              s.once('close', () => resolve());
              // Waits for the calls in flight (their acks wait on the commit), then closes.
              s.close();
            }),
        ),
      ).then(() => undefined),
  };
}
