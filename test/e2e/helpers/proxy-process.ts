import { spawn } from 'node:child_process';
import { CLI } from './detector.js';

export interface ProxyProcess {
  port: number;
  /** The process id (to read its memory from /proc). */
  pid: number;
  output(): string;
  /** SIGTERM (flushes spans) and wait; resolves to the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `forkwatch proxy` as a real process on an ephemeral port in front of `upstream` and
 * waits for its `forkwatch proxy listening url=...` line.
 */
export async function startProxyProcess(opts: { upstream: string; otlpEndpoint?: string; serviceName?: string; args?: string[]; env?: NodeJS.ProcessEnv }): Promise<ProxyProcess> {
  const args = [CLI, 'proxy', '--upstream', opts.upstream, '--host', '127.0.0.1', '--port', '0', ...(opts.args ?? [])];
  if (opts.otlpEndpoint) args.push('--otlp-endpoint', opts.otlpEndpoint);
  if (opts.serviceName) args.push('--service-name', opts.serviceName);
  const env = { ...process.env, ...opts.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    // Killed on the way out, so a late start does not outlive the failed test (see detector.ts).
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`proxy did not start:\n${out}`));
    }, 15_000);
    const onData = (): void => {
      const m = /forkwatch proxy listening url=http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`proxy exited with ${code}:\n${out}`));
    });
  });
  return {
    port,
    pid: child.pid!,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
