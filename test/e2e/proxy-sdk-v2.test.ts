/**
 * An MCP TypeScript SDK 2.x server (@modelcontextprotocol/server 2.4.0 + the
 * @modelcontextprotocol/node transport hand-wired with a `sessionIdGenerator` and an event store),
 * uninstrumented, behind a real `forkwatch proxy` process, through the seed's partition: the
 * detector finds the fork from the proxy's spans where the server rehydrates, nothing where the
 * resume is healthy, and with `--guard` the fork becomes a 404 that connectGuarded turns into a
 * re-initialize and a delivered result.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ScenarioResult, SeedScenarioOptions } from '../../src/demo/types.js';
import type { Finding } from '../../src/model/finding.js';
import { explain, runThroughProxy, settledFindings, sharedDetector } from './helpers/proxy-scenario.js';
import { CLIENT_SDK_V2, SERVER_SDK_V2 } from './helpers/sdk-v2-kit.js';

const detector = sharedDetector();
after(() => detector.stop());

const run = async (service: string, opts: Pick<SeedScenarioOptions, 'server' | 'client' | 'healthy' | 'sdk'>, proxyArgs: string[]): Promise<{ r: ScenarioResult; proxy: string }> =>
  runThroughProxy(await detector.get(), service, opts, proxyArgs, false);
const settled = async (service: string, expectSome: boolean): Promise<Finding[]> => settledFindings(await detector.get(), service, expectSome);

test('SDK 2.x server that rehydrates, behind the proxy, nothing else instrumented: the fork is found from the wire', { timeout: 60_000 }, async () => {
  const service = 'proxy-v2-naive';
  const { r, proxy } = await run(service, { server: 'naive', client: 'stock', sdk: { server: SERVER_SDK_V2 } }, []);
  const why = explain(r, proxy);
  assert.ok(r.sessions.rehydrated >= 1, why);
  const kinds = (await settled(service, true)).map((f) => f.kind);
  assert.ok(kinds.includes('minted_on_resume'), `${kinds.join(',')}\n${why}`);
});

test('SDK 2.x server with a healthy resume, behind the proxy: no finding', { timeout: 60_000 }, async () => {
  const service = 'proxy-v2-healthy';
  const { r, proxy } = await run(service, { server: 'naive', client: 'stock', healthy: true, sdk: { server: SERVER_SDK_V2 } }, []);
  const why = explain(r, proxy);
  assert.equal(r.sessions.rehydrated, 0, why);
  assert.equal(r.resultsReceived, 1, why);
  assert.deepEqual(await settled(service, false), [], why);
});

test('--guard in front of the rehydrating SDK 2.x server: the fork becomes a 404, the 2.x connectGuarded re-initializes, the result is delivered', { timeout: 60_000 }, async () => {
  const service = 'proxy-v2-guard';
  const { r, proxy } = await run(service, { server: 'naive', client: 'guarded', sdk: { server: SERVER_SDK_V2, client: CLIENT_SDK_V2 } }, ['--guard', '--guard-hold-ms', '300']);
  const why = explain(r, proxy);
  assert.ok(r.forks.some((x) => x.kind === 'session_not_found'), why);
  assert.ok(r.sessions.reinitializedByClient >= 1, why);
  assert.ok(r.calls.some((c) => c.outcome === 'result'), why);
  assert.deepEqual(r.hung, [], why);
  assert.match(proxy, /"answerForked":[1-9]|"resumeForked":[1-9]/, why);
});
