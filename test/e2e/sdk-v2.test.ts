/**
 * The seed's sequence with the real MCP TypeScript SDK 2.x (@modelcontextprotocol/server 2.4.0,
 * /node 2.1.2, /client 2.4.0) on one or both sides, over real sockets through the fault proxy;
 * the spans both sides emitted are serialized as OTLP JSON and correlated by the detector's engine.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { runSeedScenario } from '../../src/demo/seed-scenario.js';
import type { ScenarioResult, SeedScenarioOptions } from '../../src/demo/types.js';
import { FORK_KINDS } from '../../src/model/finding.js';
import { decodeJson } from '../../src/otlp/decode-json.js';
import { harness } from '../correlate/harness.js';
import { CLIENT_SDK_V2, SERVER_SDK_V2 } from './helpers/sdk-v2-kit.js';

// Twice the scenario's timers, as test/e2e/seed.test.ts: at 1x a loaded machine changes the story.
const SCALE = 2;
const REQUEST_TIMEOUT_MS = 1500 * SCALE;
const TEST_TIMEOUT_MS = 40_000;

async function run(opts: SeedScenarioOptions): Promise<{ r: ScenarioResult; kinds: string[] }> {
  const server = new InMemorySpanExporter();
  const client = new InMemorySpanExporter();
  const provider = (exporter: InMemorySpanExporter, service: string): BasicTracerProvider =>
    new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': service }), spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const r = await runSeedScenario({
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    scale: SCALE,
    salt: 'v2-salt',
    tracerProviders: { server: provider(server, 'v2-server'), client: provider(client, 'v2-client') },
    ...opts,
  });
  const spans = [...server.getFinishedSpans(), ...client.getFinishedSpans()];
  const h = harness();
  for (let i = 0; i < spans.length; i += 16) {
    h.ingest(decodeJson(Buffer.from(JsonTraceSerializer.serializeRequest(spans.slice(i, i + 16))!).toString('utf8')).spans);
  }
  h.engine.decideAll();
  return { r, kinds: h.kinds() };
}

const explain = (r: ScenarioResult): string => r.steps.map((s) => `${s.atMs} ${s.what}`).join('\n');
const forks = (kinds: string[]): string[] => kinds.filter((k) => (FORK_KINDS as readonly string[]).includes(k));

test('SDK 2.x server that rehydrates (NodeStreamableHTTPServerTransport, sessionIdGenerator), 1.x stock client: the fork is found', { timeout: TEST_TIMEOUT_MS }, async () => {
  const { r, kinds } = await run({ server: 'naive', client: 'stock', sdk: { server: SERVER_SDK_V2 } });
  const why = explain(r);
  assert.ok(r.sessions.rehydrated >= 1, why);
  assert.ok(forks(kinds).includes('minted_on_resume'), `${kinds.join(',')}\n${why}`);
  assert.ok(kinds.includes('orphaned_progress_token'), `${kinds.join(',')}\n${why}`);
});

test('SDK 2.x stock client (2025 handshake) against the 1.x naive server: the fork is found', { timeout: TEST_TIMEOUT_MS }, async () => {
  const { r, kinds } = await run({ server: 'naive', client: 'stock', sdk: { client: CLIENT_SDK_V2 } });
  const why = explain(r);
  assert.ok(r.sessions.rehydrated >= 1, why);
  assert.ok(forks(kinds).length >= 1, `${kinds.join(',')}\n${why}`);
});

test('SDK 2.x both sides, naive server: the fork is found from both sides\' spans', { timeout: TEST_TIMEOUT_MS }, async () => {
  const { r, kinds } = await run({ server: 'naive', client: 'stock', sdk: { server: SERVER_SDK_V2, client: CLIENT_SDK_V2 } });
  assert.ok(forks(kinds).includes('minted_on_resume'), `${kinds.join(',')}\n${explain(r)}`);
});

test('SDK 2.x server behind the guard, 2.x client through connectGuarded: no fork, SessionForkError, re-initialize, the result arrives', { timeout: TEST_TIMEOUT_MS }, async () => {
  const { r, kinds } = await run({ server: 'guarded', client: 'guarded', sdk: { server: SERVER_SDK_V2, client: CLIENT_SDK_V2 } });
  const why = explain(r);
  assert.deepEqual(forks(kinds), [], why);
  assert.equal(r.sessions.rehydrated, 0, why);
  assert.ok(r.forks.some((f) => f.kind === 'session_not_found'), why);
  assert.ok(r.sessions.reinitializedByClient >= 1, why);
  assert.equal(r.calls.length, 1, why);
  assert.equal(r.calls[0]!.outcome, 'result', why);
  assert.ok(r.calls[0]!.durationMs! < REQUEST_TIMEOUT_MS, `the call took ${r.calls[0]!.durationMs} ms`);
  assert.deepEqual(r.hung, []);
});
