import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { reservePort } from './reserve-port.js';

/** The repository root, found upward from here (this file also runs compiled, from build/ for the bench). */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'collector', 'otelcol', 'go.mod'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('collector/otelcol/go.mod not found above test/e2e/helpers');
    dir = up;
  }
  return dir;
}
const OTELCOL_DIR = join(repoRoot(), 'collector', 'otelcol');
/** The shipped gateway config: tests run this file, templated only through its `${env:...}`. */
export const GATEWAY_CONFIG = join(repoRoot(), 'collector', 'otel', 'gateway.yaml');

/**
 * Where collector/otelcol/build.sh puts the Collector for the current go.mod, go.sum and main.go
 * (the same hash), or `OTELCOL_BIN` when set. Undefined when it is not built.
 */
export function otelcolBinary(): string | undefined {
  const fromEnv = process.env.OTELCOL_BIN;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : undefined;
  const h = createHash('sha256');
  for (const f of ['go.mod', 'go.sum', 'main.go']) h.update(readFileSync(join(OTELCOL_DIR, f)));
  const key = h.digest('hex').slice(0, 16);
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  const bin = join(cache, 'forkwatch', `otelcol-${key}`);
  return existsSync(bin) ? bin : undefined;
}

/** Why Collector tests skip, or false when the Collector is there. */
export function otelcolUnavailable(): string | false {
  return otelcolBinary()
    ? false
    : 'the OpenTelemetry Collector is not built: run bash scripts/install-test-deps.sh, or collector/otelcol/build.sh alone (needs Go) or set OTELCOL_BIN';
}

export interface GatewayProcess {
  /** OTLP/HTTP base URL (`POST /v1/traces`). */
  otlpHttpUrl: string;
  /** The gateway's own Prometheus metrics. */
  metricsUrl: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM (the Collector drains its queues) and wait. */
  stop(): Promise<number | null>;
}

/**
 * Starts the Collector on collector/otel/gateway.yaml with loopback ports and the given replicas
 * (`host:port` of each detector's OTLP/gRPC receiver); resolves once its health check is ready.
 */
export async function startGateway(opts: { detectors: string[]; authToken?: string; timeoutMs?: number }): Promise<GatewayProcess> {
  const bin = otelcolBinary();
  if (!bin) throw new Error(String(otelcolUnavailable()));
  const [grpc, http, health, metrics] = [await reservePort(), await reservePort(), await reservePort(), await reservePort()];
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    FORKWATCH_DETECTORS: `[${opts.detectors.join(', ')}]`,
    FORKWATCH_AUTH_TOKEN: opts.authToken ?? '',
    FORKWATCH_GATEWAY_HOST: '127.0.0.1',
    FORKWATCH_GATEWAY_GRPC_PORT: String(grpc),
    FORKWATCH_GATEWAY_HTTP_PORT: String(http),
    FORKWATCH_GATEWAY_HEALTH_PORT: String(health),
    FORKWATCH_GATEWAY_METRICS_PORT: String(metrics),
  };
  const child = spawn(bin, ['--config', GATEWAY_CONFIG], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    if (gone) throw new Error(`the gateway exited before it was ready:\n${out}`);
    try {
      const res = await fetch(`http://127.0.0.1:${health}/`, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the gateway was not ready within ${opts.timeoutMs ?? 30_000} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    otlpHttpUrl: `http://127.0.0.1:${http}`,
    metricsUrl: `http://127.0.0.1:${metrics}/metrics`,
    child,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
