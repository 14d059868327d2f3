/**
 * `@modelcontextprotocol/server-everything` (npm, streamable HTTP), a real server nobody here
 * wrote, behind a real `forkwatch proxy` process: its event store replays the events of every
 * stream after the cursor and loses the stream a tool call answers on, so after the seed's
 * partition the stock client's call hangs. The detector reports it.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { reservePort } from './helpers/reserve-port.js';
import { startExternalServer } from './helpers/external-server.js';
import { explain, runThroughProxy, settledFindings, sharedDetector } from './helpers/proxy-scenario.js';

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const detector = sharedDetector();
after(() => detector.stop());

const everything = async () =>
  startExternalServer(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { PORT: String(await reservePort()) }, ready: /listening on port (\d+)/ });

const LONG_RUNNING = (): { name: string; arguments: Record<string, unknown> } => ({ name: 'trigger-long-running-operation', arguments: { duration: 2.4, steps: 6 } });

test('server-everything behind the proxy, stock client: the call hangs after the resume, and the detector says so', { timeout: 90_000 }, async () => {
  const d = await detector.get();
  const service = 'proxy-everything';
  const { r, proxy } = await runThroughProxy(d, service, { server: 'naive', client: 'stock', healthy: true, startServer: everything, tool: LONG_RUNNING, partitionAfterEvents: 5, requestTimeoutMs: 5000 }, [], true);
  const why = explain(r, proxy);
  assert.ok(r.resumes.some((x) => x.status === 200), why);
  const first = r.calls[0]!;
  assert.equal(first.outcome, 'timeout', `the first call hangs to its timeout\n${why}`);
  const f = await settledFindings(d, service, true);
  const orphan = f.find((x) => x.kind === 'orphaned_progress_token' && x.requestId === '1');
  assert.ok(orphan, `${JSON.stringify(f.map((x) => [x.kind, x.summary]))}\n${why}`);
  // Either account is the wire's: the resumed session never sent the answer, or (once the stock
  // client's cancel at its timeout has passed the proxy) the answer's stream broke and none answered.
  assert.match(orphan.summary, /never sent its answer|its response stream ended \(broken, or closed by the server\) before the answer, no stream of the session answered it/);
  assert.equal(f.filter((x) => x.kind !== 'orphaned_progress_token').length, 0, 'no fork: the session kept its one life');
});
