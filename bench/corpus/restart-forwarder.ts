import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** A TCP hop whose upstream can be swapped: the stable address of a server that restarts on another port. */
export interface RestartForwarder {
  port: number;
  /**
   * Points new connections at `port`. `undefined` holds them (the restart window): a real
   * restart's listener may refuse, but a held connect keeps the client's retry count out of the
   * comparison between servers, so every server meets the same resume. `'refuse'` closes each new
   * connection at once (a port with no listener: the client's reconnects fail).
   */
  retarget(port: number | undefined | 'refuse'): void;
  close(): Promise<void>;
}

/**
 * Starts the forwarder on 127.0.0.1. Each downstream connection is paired with one upstream
 * connection and dies with it, so stopping the server cuts every stream through it, as a process
 * exit does.
 */
export async function startRestartForwarder(): Promise<RestartForwarder> {
  let target: number | undefined | 'refuse';
  let held: (() => void)[] = [];
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  const server = net.createServer((down) => {
    track(down);
    down.pause();
    if (target === 'refuse') {
      down.resetAndDestroy();
      return;
    }
    const connect = (): void => {
      if (target === 'refuse' || target === undefined) return void down.resetAndDestroy();
      const up = net.connect(target, '127.0.0.1');
      track(up);
      up.on('connect', () => {
        down.pipe(up);
        up.pipe(down);
        down.resume();
      });
      up.on('error', () => down.destroy());
      down.on('error', () => up.destroy());
      up.on('close', () => down.destroy());
      down.on('close', () => up.destroy());
    };
    if (target === undefined) held.push(connect);
    else connect();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    retarget(port) {
      target = port;
      if (port === undefined) return;
      // Held connections meet what the window became: the new server, or a refusal.
      const go = held;
      held = [];
      for (const f of go) f();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
