import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/*
 * Ports for child processes that cannot be told "port 0" (Prometheus, Alertmanager, the Collector,
 * server-everything) or that must come back on the same port after a kill -9.
 *
 * Why not "listen on 0, read the port, close, hand it over": that port comes from the kernel's
 * ephemeral range, so until the child binds it, any socket in any process on the machine
 * (another test's listen(0), any outgoing connection's local end) may take it. CI saw exactly
 * that: the gateway exited with "bind: address already in use". Here ports come from below the
 * ephemeral range, where the kernel never hands out ports by itself, and a lock file per port
 * keeps the test files that run in parallel from picking the same one.
 */

const LOCK_DIR = join(tmpdir(), 'forkwatch-test-ports');
/** Below Linux's default ephemeral range (32768-60999); checked against the live setting. */
const RANGE_LOW = 20_000;
const held = new Set<number>();

function ephemeralLow(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock file of `port`, reclaiming it when the process that held it is gone. */
function lock(port: number): boolean {
  const file = join(LOCK_DIR, String(port));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSync(file, 'utf8') || 0);
      if (owner && pidAlive(owner)) return false;
      rmSync(file, { force: true });
    }
  }
  return false;
}

async function bindable(port: number): Promise<boolean> {
  const srv = createServer();
  return new Promise<boolean>((resolve) => {
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/**
 * A loopback port reserved for this test process until it exits: outside the ephemeral range,
 * locked against other test processes, and free when returned.
 */
export async function reservePort(): Promise<number> {
  mkdirSync(LOCK_DIR, { recursive: true });
  const high = ephemeralLow() - 1;
  const span = high - RANGE_LOW;
  if (span < 100) throw new Error(`no room below the ephemeral port range (starts at ${high + 1})`);
  const start = RANGE_LOW + ((process.pid * 97 + held.size * 13) % span);
  for (let i = 0; i < span; i++) {
    const port = RANGE_LOW + ((start - RANGE_LOW + i) % span);
    if (held.has(port) || !lock(port)) continue;
    if (await bindable(port)) {
      held.add(port);
      return port;
    }
    rmSync(join(LOCK_DIR, String(port)), { force: true });
  }
  throw new Error(`no free port in ${RANGE_LOW}-${high}`);
}

process.once('exit', () => {
  for (const port of held) rmSync(join(LOCK_DIR, String(port)), { force: true });
});

