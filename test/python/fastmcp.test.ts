/**
 * forkwatch's Python instrumentation on a server written with the standalone `fastmcp` package
 * (FastMCP 4.x on `mcp` 2.x): test/fixtures/python/fastmcp_server.py, a real process serving
 * `mcp.http_app(event_store=EventStore())` under uvicorn, instrumented the way
 * docs/instrumentation.md tells a user (`ServerInstrumentation().observe_app(app)`), played by the
 * stock TypeScript SDK client (runSeedScenario's, instrumented) over real HTTP through the fault
 * proxy. Spans go by the standard OTLP/HTTP exporters to a real sink, are held to docs/telemetry.md
 * (test/conformance/telemetry-schema.ts), then replayed into a real `forkwatch serve`.
 * Scenarios: a healthy call with progress (no cut) and a healthy resume (the call's stream cut,
 * resumed while the session lives, replayed): no finding for either; and the seed's fork (the cut
 * outlasts the reap, FastMCP's manager swapped for a rehydrating one, `--naive`): minted_on_resume.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { runSeedScenario } from '../../src/demo/seed-scenario.js';
import type { ScenarioResult } from '../../src/demo/types.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { startExternalServer } from '../e2e/helpers/external-server.js';
import { reservePort } from '../e2e/helpers/reserve-port.js';
import { CLI, type DetectorProcess } from '../e2e/helpers/detector.js';
import { pythonVenv, PYTHON_REQUIREMENTS } from '../e2e/helpers/python-venv.js';
import { OtlpSink, type ReceivedExport } from '../conformance/otlp-sink.js';
import { departures as departuresOf, replayedFindingKinds } from '../conformance/replay.js';

const SALT = 'fastmcp-salt';
const python = pythonVenv();
/** The venv's fastmcp version, or undefined when it has none (an older venv). */
const fastmcpVersion = python
  ? (() => {
      const r = spawnSync(python, ['-c', 'import importlib.metadata as m; print(m.version("fastmcp"))'], { encoding: 'utf8' });
      return r.status === 0 ? r.stdout.trim() : undefined;
    })()
  : undefined;
const skip =
  python === undefined
    ? `no Python virtualenv with ${PYTHON_REQUIREMENTS} (.ci/run creates it; or set FORKWATCH_PYTHON_VENV)`
    : fastmcpVersion === undefined
      ? `the Python virtualenv (${python}) has no fastmcp: rebuild it from ${PYTHON_REQUIREMENTS} (scripts/install-test-deps.sh)`
      : !existsSync(CLI)
        ? 'dist/ not built (npm run build)'
        : false;
const SERVER = fileURLToPath(new URL('../fixtures/python/fastmcp_server.py', import.meta.url));
const PY_SRC = fileURLToPath(new URL('../../python/src', import.meta.url));

const sink = new OtlpSink();
let sinkUrl = '';
const detectors: DetectorProcess[] = [];
before(async () => {
  if (!skip) sinkUrl = await sink.start();
});
after(async () => {
  await Promise.all(detectors.map((d) => d.kill()));
  await sink.stop();
});

interface Run {
  result: ScenarioResult;
  spans: SpanRecord[];
  exports: ReceivedExport[];
  rejected: number;
  serverOutput: string;
}

/** One seed run: the stock TS client (instrumented) against the instrumented FastMCP server. */
async function play(mode: 'call' | 'resume' | 'fork'): Promise<Run> {
  sink.reset();
  const client = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'fastmcp-ts-client' }),
    spanProcessors: [new BatchSpanProcessor(new ProtoExporter({ url: `${sinkUrl}/v1/traces` }), { scheduledDelayMillis: 100 })],
  });
  let server: Awaited<ReturnType<typeof startExternalServer>> | undefined;
  const env = { PYTHONPATH: PY_SRC, PYTHONDONTWRITEBYTECODE: '1', OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, FORKWATCH_SESSION_SALT: SALT };
  let result: ScenarioResult;
  try {
    result = await runSeedScenario({
      server: 'naive',
      client: 'stock',
      healthy: mode !== 'fork',
      salt: SALT,
      tracerProviders: { client },
      // No cut: the partition never comes, the run waits out maxRunMs (the call ends well before).
      ...(mode === 'call' ? { partitionAfterEvents: Number.MAX_SAFE_INTEGER, maxRunMs: 3000 } : {}),
      startServer: async (t) => {
        server = await startExternalServer(
          python!,
          [SERVER, '--port', String(await reservePort()), '--idle-timeout-s', String(t.reapAfterMs / 1000), '--steps', String(t.steps), '--step-ms', String(t.stepMs), '--instrument', ...(mode === 'fork' ? ['--naive'] : [])],
          { env },
        );
        return server;
      },
    });
  } finally {
    await client.forceFlush();
    await client.shutdown();
  }
  // The server exports each span as it ends (SimpleSpanProcessor); its process is closed by then.
  return { result, spans: [...sink.spans], exports: [...sink.exports], rejected: sink.rejected, serverOutput: server?.output() ?? '' };
}

const departures = (run: Run): string[] => departuresOf(run, SALT);
const findingKinds = (run: Run): Promise<string[]> => replayedFindingKinds(run, detectors);

const serverSpans = (run: Run, name: string): Array<SpanRecord['attributes']> =>
  run.spans.filter((s) => s.service === 'fastmcp-py-server' && s.name === name).map((s) => s.attributes);

test(`FastMCP ${fastmcpVersion ?? '4.x'}: a healthy call with progress, spans to the doc, no finding`, { skip, timeout: 60_000 }, async (t) => {
  const run = await play('call');
  t.diagnostic(`${run.spans.length} spans; calls ${JSON.stringify(run.result.calls.map((c) => [c.outcome, c.progress]))}`);
  assert.deepEqual(run.result.calls.map((c) => [c.outcome, c.progress]), [['result', 5]], run.serverOutput);
  assert.deepEqual(run.result.resumes, []);
  // The server side was observed (FastMCP's manager is made in the app's lifespan).
  const [created, ...more] = serverSpans(run, 'forkwatch.session.created');
  assert.ok(created && more.length === 0, run.serverOutput);
  assert.equal(created['forkwatch.session.created_by'], 'initialize');
  const progress = serverSpans(run, 'forkwatch.sse.event').filter((a) => a['mcp.method.name'] === 'notifications/progress');
  assert.equal(progress.length, 5);
  assert.deepEqual(departures(run), []);
  assert.deepEqual(await findingKinds(run), []);
});

test(`FastMCP ${fastmcpVersion ?? '4.x'}: a healthy resume (stream cut, resumed in the session's life), spans to the doc, no finding`, { skip, timeout: 60_000 }, async (t) => {
  const run = await play('resume');
  t.diagnostic(`${run.spans.length} spans; resumes ${JSON.stringify(run.result.resumes)}; calls ${JSON.stringify(run.result.calls.map((c) => c.outcome))}`);
  assert.ok(run.result.resumes.length >= 1 && run.result.resumes.every((r) => r.status === 200), JSON.stringify(run.result.resumes));
  assert.ok(run.result.replayedEventIds.length > 0, 'the resume replayed the missed events');
  assert.equal(run.result.calls[0]?.outcome, 'result', run.serverOutput);
  assert.equal(run.result.sessions.reaped, 0);
  const resumes = serverSpans(run, 'forkwatch.resume');
  assert.ok(resumes.length >= 1, run.serverOutput);
  for (const r of resumes) {
    assert.equal(r['forkwatch.resume.outcome'], 'resumed');
    assert.equal(r['forkwatch.resume.last_event_found'], true);
  }
  assert.deepEqual(departures(run), []);
  assert.deepEqual(await findingKinds(run), []);
});

test(`FastMCP ${fastmcpVersion ?? '4.x'}: the seed's fork (reap, then a rehydrating manager answers the resume) is minted_on_resume`, { skip, timeout: 60_000 }, async (t) => {
  const run = await play('fork');
  t.diagnostic(`${run.spans.length} spans; resumes ${JSON.stringify(run.result.resumes)}; sessions ${JSON.stringify(run.result.sessions)}`);
  assert.ok(run.result.sessions.reaped >= 1, run.serverOutput);
  assert.match(run.serverOutput, /^rehydrated /m);
  const created = serverSpans(run, 'forkwatch.session.created');
  t.diagnostic(`created_by: ${created.map((c) => c['forkwatch.session.created_by']).join(', ')}; resume outcomes: ${serverSpans(run, 'forkwatch.resume').map((r) => r['forkwatch.resume.outcome']).join(', ')}`);
  // A second incarnation under the client's id, minted by a request other than initialize (the
  // client's reconnecting GETs race: the standalone GET often mints it before the resume arrives).
  assert.equal(created.length, 2, run.serverOutput);
  assert.notEqual(created[1]!['forkwatch.session.created_by'], 'initialize');
  assert.equal(created[1]!['forkwatch.session.client_supplied_id'], true);
  assert.equal(created[1]!['forkwatch.session.key'], created[0]!['forkwatch.session.key']);
  assert.deepEqual(departures(run), []);
  const kinds = await findingKinds(run);
  t.diagnostic(`findings: [${kinds.join(', ')}]`);
  assert.ok(kinds.includes('minted_on_resume'), JSON.stringify(kinds));
});
