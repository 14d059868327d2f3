import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built CLI; `npm test` builds dist/ before running tests. */
export const CLI = fileURLToPath(new URL('../../../dist/cli/bin.js', import.meta.url));

export interface DetectorProcess {
  otlpUrl: string;
  httpUrl: string;
  /** `host:port` of the OTLP/gRPC receiver. */
  otlpGrpcAddress: string;
  dbPath: string;
  child: ChildProcess;
  /** Everything the process wrote so far. */
  output(): string;
  /** SIGTERM and wait; resolves to the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
}

/**
 * Starts `forkwatch serve` as a real process on ephemeral ports and waits for its
 * `forkwatch listening otlp=... http=... otlp-grpc=...` line.
 */
export async function startDetector(opts: { args?: string[]; env?: NodeJS.ProcessEnv; dbPath?: string; timeoutMs?: number } = {}): Promise<DetectorProcess> {
  const dbPath = opts.dbPath ?? join(mkdtempSync(join(tmpdir(), 'forkwatch-e2e-')), 'forkwatch.db');
  const args = [CLI, 'serve', '--host', '127.0.0.1', '--otlp-port', '0', '--http-port', '0', '--otlp-grpc-port', '0', '--db', dbPath, ...(opts.args ?? [])];
  const env = { ...process.env, ...opts.env };
  for (const k of Object.keys(env)) if (k.startsWith('FORKWATCH_') && !(opts.env && k in opts.env)) delete env[k];
  // Never run the CLI under the test runner's loaders: it is plain built JS.
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const urls = await new Promise<{ otlpUrl: string; httpUrl: string; otlpGrpcAddress: string }>((resolve, reject) => {
    // Killed on the way out: a detector that starts after the bound would otherwise outlive the
    // failed test and keep the test file's process (and so the whole run) waiting for it.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`detector did not start within ${opts.timeoutMs ?? 30_000} ms:\n${out}`));
    }, opts.timeoutMs ?? 30_000);
    const onData = (): void => {
      const m = /forkwatch listening otlp=(\S+) http=(\S+) otlp-grpc=(\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve({ otlpUrl: m[1]!, httpUrl: m[2]!, otlpGrpcAddress: m[3]! });
      }
    };
    child.stdout!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`detector exited with ${code} before listening:\n${out}`));
    });
  });
  return {
    ...urls,
    dbPath,
    child,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Runs `forkwatch demo --otlp-endpoint URL --scenario S` to completion; resolves to its output. */
export async function runDemo(opts: { otlpEndpoint: string; scenario: 'naive' | 'guarded' | 'healthy' | 'proxy' | 'all'; args?: string[]; timeoutMs?: number }): Promise<{ code: number | null; output: string }> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [CLI, 'demo', '--otlp-endpoint', opts.otlpEndpoint, '--scenario', opts.scenario, ...(opts.args ?? [])], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, output: out };
}

/** Polls `fn` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(
  fn: () => Promise<T | undefined | false | null> | T | undefined | false | null,
  timeoutMs = 15000,
  intervalMs = 100,
  /** Appended to the timeout error: what the test was waiting on. */
  describe?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) throw new Error(`waitFor timed out after ${timeoutMs} ms${lastErr ? `: ${String(lastErr)}` : ''}${describe ? `\n${describe()}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
