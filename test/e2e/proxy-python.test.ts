/**
 * A Python MCP server (`mcp` from PyPI: MCPServer, Streamable HTTP, an event store, the SDK's idle
 * reaper) behind a real `forkwatch proxy` process: the seed's partition, where this server answers
 * the late resume 404 as it should. No fork is reported; with `--guard` and connectGuarded the
 * client re-initializes and gets its result. The same server with `--naive` rehydrates the unknown
 * session instead (test/fixtures/python/rehydrating_manager.py): the detector finds the fork from
 * the proxy's spans alone, and `--guard` turns it into a 404 the client guard recovers from.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { FORK_KINDS } from '../../src/model/finding.js';
import { startExternalServer } from './helpers/external-server.js';
import { pythonVenv, PYTHON_REQUIREMENTS } from './helpers/python-venv.js';
import { reservePort } from './helpers/reserve-port.js';
import { explain, runThroughProxy, settledFindings, sharedDetector } from './helpers/proxy-scenario.js';

const python = pythonVenv();
const skip = python === undefined ? `no Python virtualenv with ${PYTHON_REQUIREMENTS} (bash scripts/install-test-deps.sh creates it; or set FORKWATCH_PYTHON_VENV)` : false;
const SCRIPT = fileURLToPath(new URL('../fixtures/python/seed_server.py', import.meta.url));
const detector = sharedDetector();
after(() => detector.stop());

/** What the last Python server printed (its `rehydrated <id>` lines, its errors). */
let output = (): string => '';
const pythonServer =
  (...extra: string[]) =>
  async (t: { reapAfterMs: number; steps: number; stepMs: number }) => {
    const server = await startExternalServer(python!, [
      SCRIPT,
      '--port',
      String(await reservePort()),
      '--idle-timeout-s',
      String(t.reapAfterMs / 1000),
      '--steps',
      String(t.steps),
      '--step-ms',
      String(t.stepMs),
      ...extra,
    ]);
    output = server.output;
    return server;
  };

test('Python server behind the proxy, stock client: the late resume is answered 404, no fork is reported', { skip, timeout: 90_000 }, async () => {
  const d = await detector.get();
  const service = 'proxy-python';
  const { r, proxy } = await runThroughProxy(d, service, { server: 'naive', client: 'stock', startServer: pythonServer() }, [], false);
  const why = explain(r, proxy);
  assert.ok(r.resumes.length >= 1 && r.resumes.every((x) => x.status === 404), why);
  const f = await settledFindings(d, service, false);
  const forks = f.filter((x) => (FORK_KINDS as readonly string[]).includes(x.kind));
  assert.deepEqual(forks.map((x) => x.kind), [], why);
});

test('Python server, healthy resume behind the proxy: the result arrives, no finding', { skip, timeout: 90_000 }, async () => {
  const d = await detector.get();
  const service = 'proxy-python-healthy';
  const { r, proxy } = await runThroughProxy(d, service, { server: 'naive', client: 'stock', healthy: true, startServer: pythonServer() }, [], true);
  const why = explain(r, proxy);
  assert.equal(r.calls[0]?.outcome, 'result', why);
  assert.deepEqual(await settledFindings(d, service, false), [], why);
});

test('Python server behind --guard, connectGuarded: 404, re-initialize, the result is delivered', { skip, timeout: 90_000 }, async () => {
  const d = await detector.get();
  const service = 'proxy-python-guard';
  const { r, proxy } = await runThroughProxy(d, service, { server: 'naive', client: 'guarded', startServer: pythonServer() }, ['--guard', '--guard-hold-ms', '300'], true);
  const why = explain(r, proxy);
  assert.ok(r.forks.some((x) => x.kind === 'session_not_found'), why);
  assert.ok(r.calls.some((c) => c.outcome === 'result'), why);
  assert.deepEqual(r.hung, [], why);
});

test('naive (rehydrating) Python server behind the proxy, stock client: the detector finds the fork from the wire', { skip, timeout: 90_000 }, async () => {
  const d = await detector.get();
  const service = 'proxy-python-naive';
  const { r, proxy } = await runThroughProxy(
    d,
    service,
    { server: 'naive', client: 'stock', startServer: pythonServer('--naive') },
    [],
    false,
  );
  const why = `${explain(r, proxy)}\n--- python ---\n${output()}`;
  assert.match(output(), /^rehydrated /m, why);
  assert.ok(r.resumes.length >= 1 && r.resumes.every((x) => x.status === 200), why);
  const f = await settledFindings(d, service, true);
  const kinds = f.map((x) => x.kind);
  assert.ok(kinds.includes('minted_on_resume'), `${kinds.join(',')}\n${why}`);
});

test('naive Python server behind --guard, connectGuarded: the fork becomes a 404, re-initialize, the result is delivered', { skip, timeout: 90_000 }, async () => {
  const d = await detector.get();
  const service = 'proxy-python-naive-guard';
  const { r, proxy } = await runThroughProxy(
    d,
    service,
    { server: 'naive', client: 'guarded', startServer: pythonServer('--naive') },
    ['--guard', '--guard-hold-ms', '300'],
    true,
  );
  const why = `${explain(r, proxy)}\n--- python ---\n${output()}`;
  assert.match(output(), /^rehydrated /m, why);
  assert.ok(r.forks.some((x) => x.kind === 'session_not_found'), why);
  assert.ok(r.calls.some((c) => c.outcome === 'result'), why);
  assert.deepEqual(r.hung, [], why);
  assert.match(proxy, /"answerForked":[1-9]|"resumeForked":[1-9]/, why);
});
