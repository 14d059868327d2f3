/**
 * The seed's partition through the fault proxy, with a real `forkwatch proxy` process in front of
 * an uninstrumented SDK 1.x server, exporting to a real `forkwatch serve` process: the detector
 * finds the fork from the proxy's spans alone, nothing on a healthy resume, and with `--guard`
 * the fork becomes a 404 that the client guard turns into a re-initialize and a delivered result.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ScenarioResult, SeedScenarioOptions } from '../../src/demo/types.js';
import type { Finding } from '../../src/model/finding.js';
import { explain, runThroughProxy, settledFindings, sharedDetector, uiLanes } from './helpers/proxy-scenario.js';

const detector = sharedDetector();
after(() => detector.stop());

const run = async (service: string, opts: Pick<SeedScenarioOptions, 'server' | 'client' | 'healthy'>, proxyArgs: string[], instrumentClient: boolean): Promise<{ r: ScenarioResult; proxy: string }> =>
  runThroughProxy(await detector.get(), service, opts, proxyArgs, instrumentClient);
const settled = async (service: string, expectSome: boolean): Promise<Finding[]> => settledFindings(await detector.get(), service, expectSome);

test('naive server behind the proxy, nothing else instrumented: the detector finds the fork from the wire', { timeout: 60_000 }, async () => {
  const service = 'proxy-naive-alone';
  const { r, proxy } = await run(service, { server: 'naive', client: 'stock' }, [], false);
  assert.ok(r.sessions.rehydrated >= 1, explain(r, proxy));
  const f = await settled(service, true);
  const kinds = f.map((x) => x.kind);
  assert.ok(kinds.includes('minted_on_resume'), `${kinds.join(',')}\n${explain(r, proxy)}`);
  // The incident view draws what the proxy saw in a lane of its own, not as the server's.
  assert.deepEqual(await uiLanes(await detector.get(), f[0]!.sessionKey), ['proxy']);
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
  assert.deepEqual(await uiLanes(await detector.get(), f[0]!.sessionKey), ['client', 'proxy']);
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
