import { spawn } from 'node:child_process';
import type { DemoServer } from '../../../src/demo/types.js';

/**
 * Starts an MCP server process (any SDK, any language) that prints a line matching `ready`
 * (default `listening <port>`, the port in group 1) when it serves `/mcp` on 127.0.0.1, and
 * `reaped <session id>` per session its reaper drops (if it has one).
 */
export async function startExternalServer(command: string, args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; ready?: RegExp } = {}): Promise<DemoServer & { output(): string }> {
  const env = { ...process.env, ...opts.env };
  delete env.NODE_OPTIONS;
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let reaped = 0;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    reaped += (d.match(/^reaped /gm) ?? []).length;
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    // Killed on the way out, so a late start does not outlive the failed test (see detector.ts).
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} did not start:\n${out}`));
    }, opts.timeoutMs ?? 30_000);
    const onData = (): void => {
      const m = (opts.ready ?? /listening (\d+)/).exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${command} exited before listening:\n${out}`));
    });
  });
  return {
    kind: 'external',
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    observations: { created: [], reaped: [], answered: [], runs: [] },
    activeSessions: () => 0,
    reapedCount: () => reaped,
    output: () => out,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    },
  };
}
