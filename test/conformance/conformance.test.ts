/**
 * Conformance: the TypeScript and the Python instrumentation on the same scripted scenarios, their
 * spans exported by the standard OTLP/HTTP exporters to a real sink (test/conformance/otlp-sink.ts),
 * every span held to docs/telemetry.md (test/conformance/telemetry-schema.ts: names, required
 * attributes, types, 256-char bounds, id shapes, the salt rule, trace context), then each language's
 * exports replayed into a real detector (`forkwatch serve`, dist/) and the findings compared.
 * Scenarios: `reap-rehydrate` (the seed's fork against a naive rehydrating server, stock client),
 * `reap-404` (the same script against a server that answers the reaped session's resume 404, as the
 * SDKs do), `no-fork` (a healthy resume: the partition shorter than the reap), `409` (the same cut
 * against a guarded server whose two-event log no longer holds the resume's cursor: answered 409)
 * and `cancel` (the app aborts its slow call after its request.received went out, then closes the
 * session: no finding; test/conformance/ts-pairs.ts plays the TypeScript side).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { createServerInstrumentation } from '@forkwatch/instrumentation/server';
import { startNaiveServer } from '../../src/demo/naive-server.js';
import { runSeedScenario } from '../../src/demo/seed-scenario.js';
import { startExternalServer } from '../e2e/helpers/external-server.js';
import { reservePort } from '../e2e/helpers/reserve-port.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { CLI, type DetectorProcess } from '../e2e/helpers/detector.js';
import { pythonVenv, PYTHON_REQUIREMENTS } from '../e2e/helpers/python-venv.js';
import { OtlpSink, type ReceivedExport } from './otlp-sink.js';
import { guarded409, runTsCancel } from './ts-pairs.js';
import { readSchema, REQUIRED, violations } from './telemetry-schema.js';
import { departures, replayedFindingKinds } from './replay.js';

const SALT = 'conformance-salt';
const python = pythonVenv();
const skip =
  python === undefined
    ? `no Python virtualenv with ${PYTHON_REQUIREMENTS} (.ci/run creates it; or set FORKWATCH_PYTHON_VENV)`
    : !existsSync(CLI)
      ? 'dist/ not built (npm run build)'
      : false;
const PY_SCRIPT = fileURLToPath(new URL('../fixtures/python/conformance_pair.py', import.meta.url));
const PY_SRC = fileURLToPath(new URL('../../python/src', import.meta.url));
const PY_SERVER = fileURLToPath(new URL('../fixtures/python/seed_server.py', import.meta.url));

type Scenario = 'reap-rehydrate' | 'reap-404' | 'no-fork' | '409' | 'cancel';
interface Run {
  spans: SpanRecord[];
  exports: ReceivedExport[];
  rejected: number;
}

const sink = new OtlpSink();
let sinkUrl = '';
const detectors: DetectorProcess[] = [];
const runs = new Map<string, Run>();

before(async () => {
  if (!skip) sinkUrl = await sink.start();
});
after(async () => {
  await Promise.all(detectors.map((d) => d.kill()));
  await sink.stop();
});

function pyEnv(): NodeJS.ProcessEnv {
  return { ...process.env, PYTHONPATH: PY_SRC, PYTHONDONTWRITEBYTECODE: '1', OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_BSP_SCHEDULE_DELAY: '100', FORKWATCH_SESSION_SALT: SALT };
}

/** The TypeScript client (runSeedScenario's stock SDK client, instrumented) against a TS or, mixed, a Python server. */
async function runTs(scenario: Scenario, pythonServer = false): Promise<Run> {
  sink.reset();
  const make = (name: string): BasicTracerProvider =>
    new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': name }),
      spanProcessors: [new BatchSpanProcessor(new ProtoExporter({ url: `${sinkUrl}/v1/traces` }), { scheduledDelayMillis: 100 })],
    });
  const p = { server: make('conformance-ts-server'), client: make('conformance-ts-client') };
  // reap-404: the SDK's answer to an unknown session (no rehydration), instrumented as runSeedScenario would.
  const sdk404 = async (t: { reapAfterMs: number; steps: number; stepMs: number }) =>
    startNaiveServer({ ...t, rehydrate: false, instrumentation: createServerInstrumentation({ tracerProvider: p.server, salt: SALT }) });
  try {
    if (scenario === 'cancel') await runTsCancel(p, SALT);
    // 409: the Python pair's cut (after the call's second progress notification, 700 ms; the
    // tap counts every event with an id: the initialize POST's priming event and answer, the call's
    // priming event, then its progress), healthy (the network heals without waiting for a reap):
    // by the resume the guard's two-event log has moved on.
    else if (scenario === '409')
      await runSeedScenario({
        server: 'guarded',
        client: 'stock',
        healthy: true,
        salt: SALT,
        tracerProviders: p,
        steps: 5,
        stepMs: 150,
        partitionAfterEvents: 5,
        partitionMs: 700,
        startServer: guarded409(p.server, SALT),
      });
    else
      await runSeedScenario({
      server: 'naive',
      client: 'stock',
      healthy: scenario === 'no-fork',
      salt: SALT,
      tracerProviders: pythonServer ? { client: p.client } : p,
      ...(scenario === 'reap-404' && !pythonServer ? { startServer: sdk404 } : {}),
      ...(pythonServer
        ? {
            startServer: async (t: { reapAfterMs: number; steps: number; stepMs: number }) =>
              startExternalServer(
                python!,
                [PY_SERVER, '--port', String(await reservePort()), '--idle-timeout-s', String(t.reapAfterMs / 1000), '--steps', String(t.steps), '--step-ms', String(t.stepMs), '--naive', '--instrument'],
                { env: pyEnv() },
              ),
          }
        : {}),
    });
  } finally {
    await Promise.all([p.server.forceFlush(), p.client.forceFlush()]);
    await Promise.all([p.server.shutdown(), p.client.shutdown()]);
  }
  return { spans: [...sink.spans], exports: [...sink.exports], rejected: sink.rejected };
}

/** The Python client (conformance_pair.py) against its own Python server or, mixed, the TS naive server. */
async function runPython(scenario: Scenario, tsServer = false): Promise<Run> {
  sink.reset();
  let external: { url: string; close(): Promise<void> } | undefined;
  let provider: BasicTracerProvider | undefined;
  if (tsServer) {
    provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'conformance-ts-server' }),
      spanProcessors: [new BatchSpanProcessor(new ProtoExporter({ url: `${sinkUrl}/v1/traces` }), { scheduledDelayMillis: 100 })],
    });
    external = await startNaiveServer({ reapAfterMs: 300, steps: 5, stepMs: 150, instrumentation: createServerInstrumentation({ tracerProvider: provider, salt: SALT }) });
  }
  const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const args = [PY_SCRIPT, scenario === 'no-fork' ? 'healthy-resume' : scenario, ...(external ? [external.url] : [])];
    const child = spawn(python!, args, { env: pyEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
  if (external) await external.close();
  if (provider) {
    await provider.forceFlush();
    await provider.shutdown();
  }
  assert.equal(r.code, 0, r.out);
  return { spans: [...sink.spans], exports: [...sink.exports], rejected: sink.rejected };
}

const checkRun = (run: Run): string[] => departures(run, SALT);
const findingKinds = (run: Run): Promise<string[]> => replayedFindingKinds(run, detectors);

/** The server's own account of what the scenario is about, so that a run that missed it fails. */
function serverSaw(run: Run, scenario: Scenario): void {
  const server = run.spans.filter((s) => s.attributes['forkwatch.side'] === 'server');
  if (scenario === '409') {
    const outcomes = server.filter((s) => s.name === 'forkwatch.resume').map((s) => s.attributes['forkwatch.resume.outcome']);
    assert.ok(outcomes.includes('rejected_gap'), `resume outcomes: ${outcomes.join(', ')}`);
  } else if (scenario === 'cancel') {
    const settled = server.filter((s) => s.name === 'forkwatch.request.settled').map((s) => s.attributes);
    assert.deepEqual(
      settled.map((a) => [a['mcp.method.name'], a['forkwatch.request.outcome']]),
      [['tools/call', 'cancelled']],
    );
    assert.ok(Number(settled[0]!['forkwatch.request.duration_ms']) >= 100, 'from the arrival of a call held 100 ms');
    assert.ok(server.some((s) => s.name === 'forkwatch.session.ended' && s.attributes['forkwatch.session.end_reason'] === 'closed_by_client'));
  }
}

for (const scenario of ['reap-rehydrate', 'reap-404', 'no-fork', '409', 'cancel'] as const) {
  for (const lang of ['ts', 'python'] as const) {
    test(`conformance ${lang} ${scenario}: every span holds to docs/telemetry.md`, { skip, timeout: 90_000 }, async (t) => {
      const run = lang === 'ts' ? await runTs(scenario) : await runPython(scenario);
      runs.set(`${lang}:${scenario}`, run);
      const names = [...new Set(run.spans.map((s) => s.name))].sort();
      t.diagnostic(`${run.spans.length} spans: ${names.join(', ')}`);
      assert.ok(run.spans.length > 0);
      assert.deepEqual(checkRun(run), []);
      serverSaw(run, scenario);
    });
  }
  test(`conformance ${scenario}: the detector's findings are the same for TypeScript and Python`, { skip, timeout: 90_000 }, async (t) => {
    const ts = runs.get(`ts:${scenario}`);
    const py = runs.get(`python:${scenario}`);
    assert.ok(ts && py, 'both runs recorded');
    const [tsKinds, pyKinds] = [await findingKinds(ts), await findingKinds(py)];
    t.diagnostic(`ts: [${tsKinds.join(', ')}] python: [${pyKinds.join(', ')}]`);
    const settled = (r: Run): string[] =>
      r.spans.filter((x) => x.name === 'forkwatch.request.settled' && x.attributes['mcp.method.name'] === 'tools/call').map((x) => String(x.attributes['forkwatch.request.outcome']));
    t.diagnostic(`tools/call settled: ts [${settled(ts).join(', ')}] python [${settled(py).join(', ')}]`);
    if (scenario === 'reap-404' || scenario === '409') {
      // The SDKs differ here, not the instrumentation: the TypeScript SDK client waits on the call
      // whose resume was answered 404 (or 409) until its timeout (an orphaned progress token), the
      // Python SDK (mcp 2.3.0) gives up after its reconnection attempts and fails the call
      // (settled, so never an orphan). Every other finding must be the same.
      const noOrphan = (k: string[]): string[] => k.filter((x) => x !== 'orphaned_progress_token');
      assert.deepEqual(noOrphan(pyKinds), noOrphan(tsKinds));
      assert.equal(tsKinds.includes('orphaned_progress_token'), settled(ts).includes('timeout'));
      assert.equal(pyKinds.includes('orphaned_progress_token'), settled(py).includes('timeout'));
    } else assert.deepEqual(pyKinds, tsKinds);
    if (scenario === 'reap-rehydrate') assert.ok(tsKinds.includes('minted_on_resume'), JSON.stringify(tsKinds));
    else if (scenario === 'reap-404' || scenario === '409') assert.ok(!tsKinds.includes('minted_on_resume'), JSON.stringify(tsKinds));
    else assert.deepEqual(tsKinds, []);
  });
}

// Mixed pairs on the seed's fork: each side's spans held to the doc, and the detector's findings
// the same as for the TypeScript pair.
for (const mixed of ['ts-client+python-server', 'python-client+ts-server'] as const) {
  test(`conformance mixed ${mixed} reap-rehydrate: spans hold to the doc, findings as the TypeScript pair's`, { skip, timeout: 120_000 }, async (t) => {
    const run = mixed === 'ts-client+python-server' ? await runTs('reap-rehydrate', true) : await runPython('reap-rehydrate', true);
    const sides = [...new Set(run.spans.map((s) => `${s.service}/${String(s.attributes['forkwatch.side'])}`))].sort();
    t.diagnostic(`${run.spans.length} spans from ${sides.join(', ')}`);
    assert.equal(sides.length, 2, sides.join(', '));
    assert.deepEqual(checkRun(run), []);
    const tsPair = runs.get('ts:reap-rehydrate');
    assert.ok(tsPair, 'the TypeScript pair ran');
    const [mixedKinds, tsKinds] = [await findingKinds(run), await findingKinds(tsPair)];
    t.diagnostic(`${mixed}: [${mixedKinds.join(', ')}] ts pair: [${tsKinds.join(', ')}]`);
    assert.deepEqual(mixedKinds, tsKinds);
  });
}

test('the checker fails a span missing a required attribute, and one outside the doc', { skip }, () => {
  const run = runs.get('python:reap-rehydrate');
  assert.ok(run);
  const schema = readSchema();
  for (const [name, required] of Object.entries(REQUIRED)) {
    if (name === '*') continue;
    const span = run.spans.find((s) => s.name === name);
    if (!span) continue;
    for (const attr of required) {
      if (!(attr in span.attributes)) continue;
      const dropped = { ...span, attributes: { ...span.attributes } };
      delete dropped.attributes[attr];
      assert.ok(violations(dropped, schema, SALT).some((v) => v.includes(`required ${attr} missing`)), `${name} without ${attr}`);
    }
  }
  const any = run.spans[0]!;
  assert.ok(violations({ ...any, name: 'forkwatch.nonsense' }, schema, SALT).length > 0);
  assert.ok(violations({ ...any, attributes: { ...any.attributes, 'forkwatch.session.key': 'x'.repeat(32) } }, schema, SALT).length > 0);
});
