import assert from 'node:assert/strict';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { runSeedScenario } from '../../../src/demo/seed-scenario.js';
import type { ScenarioResult, SeedScenarioOptions } from '../../../src/demo/types.js';
import type { Finding } from '../../../src/model/finding.js';
import { startDetector, waitFor, type DetectorProcess } from './detector.js';
import { startProxyProcess, type ProxyProcess } from './proxy-process.js';

export const PROXY_E2E_SALT = 'e2e-proxy-salt';

/** One detector process per test file, started on first use; `stop()` in `after`. */
export function sharedDetector(): { get(): Promise<DetectorProcess>; stop(): Promise<void> } {
  let d: DetectorProcess | undefined;
  return {
    get: async () => (d ??= await startDetector({ args: ['--decision-window-ms', '1000', '--tick-interval-ms', '100'] })),
    stop: async () => void (await d?.kill()),
  };
}

/**
 * The seed's sequence (scaled timers x2: every hop is a process of its own on a shared machine)
 * with a `forkwatch proxy` process between the fault proxy and the server, exporting as `service`.
 */
export async function runThroughProxy(
  d: DetectorProcess,
  service: string,
  opts: Pick<SeedScenarioOptions, 'server' | 'client' | 'healthy' | 'startServer' | 'scale' | 'tool' | 'partitionAfterEvents' | 'requestTimeoutMs' | 'sdk' | 'maxRunMs'>,
  proxyArgs: string[],
  instrumentClient: boolean,
): Promise<{ r: ScenarioResult; proxy: string }> {
  let px: ProxyProcess | undefined;
  const client = instrumentClient
    ? new BasicTracerProvider({
        resource: resourceFromAttributes({ 'service.name': `${service}-client` }),
        spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${d.otlpUrl}/v1/traces` }), { scheduledDelayMillis: 100 })],
      })
    : undefined;
  try {
    const r = await runSeedScenario({
      scale: 2,
      requestTimeoutMs: 3000,
      // The run's bound counts the server's start: an external one (a Python venv, an npm
      // package) took 13 s to start on a loaded machine and left the scenario no time.
      ...(opts.startServer !== undefined ? { maxRunMs: 45_000 } : {}),
      ...opts,
      salt: PROXY_E2E_SALT,
      tracerProviders: client ? { client } : {},
      inFrontOfServer: async (url) => {
        px = await startProxyProcess({ upstream: url, otlpEndpoint: d.otlpUrl, serviceName: service, args: proxyArgs, env: { FORKWATCH_SESSION_SALT: PROXY_E2E_SALT } });
        return { port: px.port, what: `forkwatch proxy ${proxyArgs.join(' ')}`, close: async () => void (await px!.stop()) };
      },
    });
    return { r, proxy: px!.output() };
  } finally {
    await client?.forceFlush();
    await client?.shutdown();
    await px?.stop();
  }
}

export async function findingsOf(d: DetectorProcess, service: string): Promise<Finding[]> {
  const res = await fetch(`${d.httpUrl}/api/v1/findings?service=${encodeURIComponent(service)}&limit=100`);
  assert.equal(res.status, 200);
  return ((await res.json()) as { items: Finding[] }).items;
}

/** Findings once the decision window has passed and they stop changing. */
export async function settledFindings(d: DetectorProcess, service: string, expectSome: boolean): Promise<Finding[]> {
  let last = -1;
  let stable = 0;
  return waitFor(async () => {
    const f = await findingsOf(d, service);
    stable = f.length === last ? stable + 1 : 0;
    last = f.length;
    return stable >= 3 && (f.length > 0 || !expectSome) ? f : undefined;
  }, 20_000, 500);
}

export function explain(r: ScenarioResult, proxy: string): string {
  return `${r.steps.map((s) => `${s.atMs} ${s.what}`).join('\n')}\n--- proxy ---\n${proxy}`;
}

/** The lane names the incident view draws for a session (`/ui/sessions/:key`, the live lineage). */
export async function uiLanes(d: DetectorProcess, sessionKey: string): Promise<string[]> {
  const res = await fetch(`${d.httpUrl}/ui/sessions/${encodeURIComponent(sessionKey)}`);
  assert.equal(res.status, 200);
  const html = await res.text();
  return [...html.matchAll(/<title>lane: ([^<]*)<\/title>/g)].map((m) => m[1]!);
}
