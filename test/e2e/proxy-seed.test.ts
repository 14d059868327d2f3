/**
 * The seed's partition through the fault proxy, with a real `forkwatch proxy` process in front of
 * an uninstrumented SDK 1.x server, exporting to a real `forkwatch serve` process: the detector
 * finds the fork from the proxy's spans alone, nothing on a healthy resume, and with `--guard`
 * the fork becomes a 404 that the client guard turns into a re-initialize and a delivered result.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { runSeedScenario } from '../../src/demo/seed-scenario.js';
import type { ScenarioResult, SeedScenarioOptions } from '../../src/demo/types.js';
import type { Finding } from '../../src/model/finding.js';
import { startDetector, waitFor, type DetectorProcess } from './helpers/detector.js';
import { startProxyProcess, type ProxyProcess } from './helpers/proxy-process.js';

const SALT = 'e2e-proxy-salt';
let detector: DetectorProcess | undefined;
after(async () => {
  await detector?.kill();
});

async function theDetector(): Promise<DetectorProcess> {
  detector ??= await startDetector({ args: ['--decision-window-ms', '1000', '--tick-interval-ms', '100'] });
  return detector;
}

async function run(service: string, opts: Pick<SeedScenarioOptions, 'server' | 'client' | 'healthy'>, proxyArgs: string[], instrumentClient: boolean): Promise<{ r: ScenarioResult; proxy: string }> {
  const d = await theDetector();
  let px: ProxyProcess | undefined;
  const client = instrumentClient
    ? new BasicTracerProvider({
        resource: resourceFromAttributes({ 'service.name': `${service}-client` }),
        spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${d.otlpUrl}/v1/traces` }), { scheduledDelayMillis: 100 })],
      })
    : undefined;
  try {
    const r = await runSeedScenario({
      ...opts,
      salt: SALT,
      // Timers doubled: every hop here is a process of its own on a shared machine.
      scale: 2,
      requestTimeoutMs: 3000,
      tracerProviders: client ? { client } : {},
      inFrontOfServer: async (url) => {
        px = await startProxyProcess({ upstream: url, otlpEndpoint: d.otlpUrl, serviceName: service, args: proxyArgs, env: { FORKWATCH_SESSION_SALT: SALT } });
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

async function findings(service: string): Promise<Finding[]> {
  const res = await fetch(`${detector!.httpUrl}/api/v1/findings?service=${encodeURIComponent(service)}&limit=100`);
  assert.equal(res.status, 200);
  return ((await res.json()) as { items: Finding[] }).items;
}

/** Findings once the detector's decision window has passed and they stop changing. */
async function settled(service: string, expectSome: boolean): Promise<Finding[]> {
  let last = -1;
  let stable = 0;
  return waitFor(async () => {
    const f = await findings(service);
    stable = f.length === last ? stable + 1 : 0;
    last = f.length;
    return stable >= 3 && (f.length > 0 || !expectSome) ? f : undefined;
  }, 20_000, 500);
}

function explain(r: ScenarioResult, proxy: string): string {
  return `${r.steps.map((s) => `${s.atMs} ${s.what}`).join('\n')}\n--- proxy ---\n${proxy}`;
}

test('naive server behind the proxy, nothing else instrumented: the detector finds the fork from the wire', { timeout: 60_000 }, async () => {
  const service = 'proxy-naive-alone';
  const { r, proxy } = await run(service, { server: 'naive', client: 'stock' }, [], false);
  assert.ok(r.sessions.rehydrated >= 1, explain(r, proxy));
  const f = await settled(service, true);
  const kinds = f.map((x) => x.kind);
  assert.ok(kinds.includes('minted_on_resume'), `${kinds.join(',')}\n${explain(r, proxy)}`);
});

test('naive server behind the proxy with an instrumented client: proxy and client spans correlate', { timeout: 60_000 }, async () => {
  const service = 'proxy-naive-client';
  const { r, proxy } = await run(service, { server: 'naive', client: 'stock' }, [], true);
  assert.ok(r.sessions.rehydrated >= 1, explain(r, proxy));
  const f = await settled(service, true);
  const kinds = new Set(f.map((x) => x.kind));
  assert.ok(kinds.has('minted_on_resume'), `${[...kinds].join(',')}\n${explain(r, proxy)}`);
  assert.ok(kinds.has('dedup_loss'), `the client's dropped result, proved by the proxy's new incarnation: ${[...kinds].join(',')}`);
  assert.ok(kinds.has('orphaned_progress_token'), `${[...kinds].join(',')}`);
});

test('healthy resume behind the proxy: no finding', { timeout: 60_000 }, async () => {
  const service = 'proxy-healthy';
  const { r, proxy } = await run(service, { server: 'naive', client: 'stock', healthy: true }, [], true);
  assert.equal(r.sessions.rehydrated, 0, explain(r, proxy));
  assert.equal(r.resultsReceived, 1, explain(r, proxy));
  assert.deepEqual(await settled(service, false), []);
});

test('--guard in front of the naive server: the fork becomes a 404, connectGuarded re-initializes, the result is delivered', { timeout: 60_000 }, async () => {
  const service = 'proxy-guard-naive';
  const { r, proxy } = await run(service, { server: 'naive', client: 'guarded' }, ['--guard', '--guard-hold-ms', '300'], true);
  const why = explain(r, proxy);
  assert.ok(r.forks.some((x) => x.kind === 'session_not_found'), why);
  assert.ok(r.sessions.reinitializedByClient >= 1, why);
  assert.ok(r.calls.some((c) => c.outcome === 'result'), why);
  assert.deepEqual(r.hung, [], why);
  assert.match(proxy, /"answerForked":[1-9]|"resumeForked":[1-9]/, why);
});

test('--guard in front of a healthy resume changes nothing the client sees', { timeout: 60_000 }, async () => {
  const service = 'proxy-guard-healthy';
  const { r, proxy } = await run(service, { server: 'naive', client: 'guarded', healthy: true }, ['--guard', '--guard-hold-ms', '300'], true);
  const why = explain(r, proxy);
  assert.deepEqual(r.forks, [], why);
  assert.equal(r.resultsReceived, 1, why);
  assert.equal(r.sessions.reinitializedByClient, 0, why);
  assert.deepEqual(await settled(service, false), []);
});
