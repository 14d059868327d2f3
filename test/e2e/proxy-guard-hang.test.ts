/**
 * Issue 24, defect 7: `--guard` in front of a rehydrating server (the TypeScript SDK 1.x naive
 * server; the Python `mcp` server with `--naive`), a real `forkwatch proxy` process. The partition
 * cuts the call's stream; the rehydrated session answers the resume 200 and replays nothing. The
 * guard probes the session (a `ping`): its answer's event id restarts the log, so the resume is
 * answered 404 / -32001 at once: the first call does not hang to its timeout (it hung, released as
 * an empty 200, the fork caught only at the next request).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startExternalServer } from './helpers/external-server.js';
import { pythonVenv } from './helpers/python-venv.js';
import { reservePort } from './helpers/reserve-port.js';
import { explain, runThroughProxy, settledFindings, sharedDetector } from './helpers/proxy-scenario.js';

const detector = sharedDetector();
after(() => detector.stop());
const python = pythonVenv();
const SCRIPT = fileURLToPath(new URL('../fixtures/python/seed_server.py', import.meta.url));
const pythonNaive = async (t: { reapAfterMs: number; steps: number; stepMs: number }) =>
  startExternalServer(python!, [SCRIPT, '--port', String(await reservePort()), '--idle-timeout-s', String(t.reapAfterMs / 1000), '--steps', String(t.steps), '--step-ms', String(t.stepMs), '--naive']);

for (const server of ['ts', 'python'] as const) {
  for (const client of ['stock', 'guarded'] as const) {
    test(`--guard, ${server} rehydrating server, ${client} client: the empty resume is refused 404 at once, the first call does not hang, the mint is reported`, { skip: server === 'python' && python === undefined ? 'no Python virtualenv' : false, timeout: 120_000 }, async () => {
      const d = await detector.get();
      const service = `proxy-guard-hang-${server}-${client}`;
      const { r, proxy } = await runThroughProxy(d, service, { server: 'naive', client, ...(server === 'python' ? { startServer: pythonNaive } : {}) }, ['--guard', '--guard-hold-ms', '300'], true);
      const why = explain(r, proxy);
      assert.ok(r.resumes.length >= 1 && r.resumes[0]!.status === 404, `the resume is answered 404\n${why}`);
      // The stock SDK client reports the 404 to its resume but keeps waiting for the call (it does
      // not fail pending calls on it): only a guarded client can be spared the hang.
      if (client === 'guarded') assert.notEqual(r.calls[0]?.outcome, 'timeout', `the first call fails at once instead of hanging\n${why}`);
      assert.match(proxy, /"resumeForked":[1-9]/, why);
      if (client === 'guarded') assert.ok(r.calls.some((c) => c.outcome === 'result'), why);
      const f = await settledFindings(d, service, true);
      assert.ok(f.some((x) => x.kind === 'minted_on_resume'), `${f.map((x) => x.kind).join(',')}\n${why}`);
    });
  }
}
