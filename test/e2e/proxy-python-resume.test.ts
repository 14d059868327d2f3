/**
 * Issue 24, defect 3: a Python `mcp` server (its event store numbers events from one process-wide
 * counter, as stores keyed by a global sequence do) behind a real `forkwatch proxy` process. Two
 * stock clients call the slow tool at once (with different JSON-RPC ids), so the ids of one session's stream are not
 * consecutive: the other session's events take the ids between. The first client's stream is cut
 * and it resumes while the session lives: the server replays every event of the stream after the
 * cursor, the call gets its result. The client is instrumented; the detector must report nothing
 * (it said replay_gap: "continued at seq N: k event(s) were never replayed").
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createAppClient } from '../../src/demo/app-client.js';
import { FaultProxy } from '../../src/demo/fault-proxy.js';
import { wireTap } from '../../src/demo/wire-tap.js';
import { startExternalServer } from './helpers/external-server.js';
import { pythonVenv, PYTHON_REQUIREMENTS } from './helpers/python-venv.js';
import { reservePort } from './helpers/reserve-port.js';
import { startProxyProcess } from './helpers/proxy-process.js';
import { PROXY_E2E_SALT, settledFindings, sharedDetector } from './helpers/proxy-scenario.js';
import { waitFor } from './helpers/detector.js';

const python = pythonVenv();
const skip = python === undefined ? `no Python virtualenv with ${PYTHON_REQUIREMENTS} (.ci/run creates it; or set FORKWATCH_PYTHON_VENV)` : false;
const SCRIPT = fileURLToPath(new URL('../fixtures/python/seed_server.py', import.meta.url));
const detector = sharedDetector();
const stops: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const s of stops.reverse()) await s();
  await detector.stop();
});

test('Python server behind the proxy, interleaved sessions, healthy resume of one: no replay_gap', { skip, timeout: 120_000 }, async () => {
  const d = await detector.get();
  const service = 'proxy-python-resume';
  const server = await startExternalServer(python!, [SCRIPT, '--port', String(await reservePort()), '--idle-timeout-s', '120', '--steps', '10', '--step-ms', '150']);
  stops.push(() => server.close());
  const px = await startProxyProcess({ upstream: `http://127.0.0.1:${server.port}`, otlpEndpoint: d.otlpUrl, serviceName: service, env: { FORKWATCH_SESSION_SALT: PROXY_E2E_SALT } });
  stops.push(() => px.stop());
  const fault = await FaultProxy.start({ targetPort: px.port });
  stops.push(() => fault.close());
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': `${service}-client` }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${d.otlpUrl}/v1/traces` }), { scheduledDelayMillis: 100 })],
  });
  stops.push(() => provider.shutdown());

  // The cut: after the first client's 3rd progress notification, every connection through the
  // fault proxy drops; healed 200 ms later, the SDK reconnects with Last-Event-ID.
  let progress = 0;
  const tap = wireTap(fetch, {
    onEvent: (e) => {
      if (e.info.method !== 'notifications/progress' || ++progress !== 3) return;
      fault.partition();
      setTimeout(() => fault.heal(), 200).unref();
    },
  });
  const common = { reconnectDelayMs: 300, requestTimeoutMs: 30_000, salt: PROXY_E2E_SALT };
  const a = await createAppClient('stock', { ...common, url: fault.url('/mcp'), fetch: tap.fetch, tracerProvider: provider });
  // The other session calls with another JSON-RPC id: the fixture's store keys streams by
  // request id alone, as the SDK's example store does, and would replay its events to the first.
  const b = new Client({ name: 'other', version: '1.0.0' });
  await b.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${px.port}/mcp`)));
  await b.listTools();
  stops.push(() => a.close(), () => b.close());
  const [ra, rb] = await Promise.all([
    a.callTool('a', () => {}),
    b.callTool({ name: 'slow_report', arguments: { topic: 'b' } }, undefined, { onprogress: () => {}, timeout: 30_000 }),
  ]);
  assert.match(ra, /report on a/);
  assert.match(JSON.stringify(rb), /report on b/);

  // What the wire shows: the resume, and the first event after it not the cursor's successor
  // (the ids between went to the other session): the case the test is about.
  const resume = tap.exchanges.findIndex((x) => x.lastEventId !== undefined && x.status === 200);
  const why = JSON.stringify({ exchanges: tap.exchanges, events: tap.events.map((e) => [e.exchange, e.eventId, e.info.kind]) });
  assert.ok(resume >= 0, why);
  const cursor = Number(tap.exchanges[resume]!.lastEventId!.slice(1));
  const next = tap.events.find((e) => e.exchange === resume);
  assert.ok(next !== undefined && Number(next.eventId.slice(1)) > cursor + 1, `the resumed stream's ids skip the other session's\n${why}`);

  await provider.forceFlush();
  await px.stop();
  // The detector has the client's resume before it settles on findings.
  await waitFor(async () => ((await (await fetch(`${d.httpUrl}/api/v1/findings?limit=1`)).status) === 200 ? true : undefined), 10_000, 100);
  const f = await settledFindings(d, service, false);
  assert.deepEqual(f.map((x) => `${x.kind}: ${x.summary}`), [], `${why}\n${px.output()}`);
});
