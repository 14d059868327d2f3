/**
 * A Python MCP server (`mcp` from PyPI: MCPServer, Streamable HTTP, an event store, the SDK's idle
 * reaper) behind a real `forkwatch proxy` process: the seed's partition, where this server answers
 * the late resume 404 as it should. No fork is reported; with `--guard` and connectGuarded the
 * client re-initializes and gets its result.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { FORK_KINDS } from '../../src/model/finding.js';
import { startExternalServer } from './helpers/external-server.js';
import { pythonVenv, PYTHON_REQUIREMENTS } from './helpers/python-venv.js';
import { explain, runThroughProxy, settledFindings, sharedDetector } from './helpers/proxy-scenario.js';

const python = pythonVenv();
const skip = python === undefined ? `no Python virtualenv with ${PYTHON_REQUIREMENTS} (.ci/run creates it; or set FORKWATCH_PYTHON_VENV)` : false;
const SCRIPT = fileURLToPath(new URL('../fixtures/python/seed_server.py', import.meta.url));
const detector = sharedDetector();
after(() => detector.stop());

const pythonServer = (t: { reapAfterMs: number; steps: number; stepMs: number }) =>
  startExternalServer(python!, [SCRIPT, '--idle-timeout-s', String(t.reapAfterMs / 1000), '--steps', String(t.steps), '--step-ms', String(t.stepMs)]);

test('Python server behind the proxy, stock client: the late resume is answered 404, no fork is reported', { skip, timeout: 90_000 }, async () => {
  const d = await detector.get();
  const service = 'proxy-python';
  const { r, proxy } = await runThroughProxy(d, service, { server: 'naive', client: 'stock', startServer: pythonServer }, [], false);
  const why = explain(r, proxy);
  assert.ok(r.resumes.length >= 1 && r.resumes.every((x) => x.status === 404), why);
  const f = await settledFindings(d, service, false);
  const forks = f.filter((x) => (FORK_KINDS as readonly string[]).includes(x.kind));
  assert.deepEqual(forks.map((x) => x.kind), [], why);
});

test('Python server, healthy resume behind the proxy: the result arrives, no finding', { skip, timeout: 90_000 }, async () => {
  const d = await detector.get();
  const service = 'proxy-python-healthy';
  const { r, proxy } = await runThroughProxy(d, service, { server: 'naive', client: 'stock', healthy: true, startServer: pythonServer }, [], true);
  const why = explain(r, proxy);
  assert.equal(r.calls[0]?.outcome, 'result', why);
  assert.deepEqual(await settledFindings(d, service, false), [], why);
});

test('Python server behind --guard, connectGuarded: 404, re-initialize, the result is delivered', { skip, timeout: 90_000 }, async () => {
  const d = await detector.get();
  const service = 'proxy-python-guard';
  const { r, proxy } = await runThroughProxy(d, service, { server: 'naive', client: 'guarded', startServer: pythonServer }, ['--guard', '--guard-hold-ms', '300'], true);
  const why = explain(r, proxy);
  assert.ok(r.forks.some((x) => x.kind === 'session_not_found'), why);
  assert.ok(r.calls.some((c) => c.outcome === 'result'), why);
  assert.deepEqual(r.hung, [], why);
});
