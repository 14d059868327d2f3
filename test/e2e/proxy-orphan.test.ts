/**
 * A request whose stream broke, found from the proxy alone: the TS SDK 1.x naive server behind a
 * real `forkwatch proxy` process, the stock client, no client instrumentation. The partition
 * breaks the slow call's stream; the rehydrated session answers the resume 200 with nothing; the
 * call never gets its answer and the stock client cancels it at its timeout
 * (`notifications/cancelled`): the proxy's `request.settled` (cancelled, `stream_closed`) lets the
 * detector report the orphaned progress token. A healthy resume (the answer arrives) reports none.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { explain, runThroughProxy, settledFindings, sharedDetector } from './helpers/proxy-scenario.js';

const detector = sharedDetector();
after(() => detector.stop());

test('naive server behind the proxy, stock client, nothing else instrumented: the broken, cancelled call is reported orphaned', { timeout: 90_000 }, async () => {
  const d = await detector.get();
  const service = 'proxy-orphan-naive';
  const { r, proxy } = await runThroughProxy(d, service, { server: 'naive', client: 'stock' }, [], false);
  const why = explain(r, proxy);
  const first = r.calls[0];
  assert.ok(r.sessions.rehydrated >= 1, why);
  assert.equal(first?.outcome, 'timeout', `the first call hangs until the stock client's timeout\n${why}`);
  const f = await settledFindings(d, service, true);
  const orphans = f.filter((x) => x.kind === 'orphaned_progress_token');
  assert.equal(orphans.length, 1, `${f.map((x) => `${x.kind}: ${x.summary}`).join('\n')}\n${why}`);
  const o = orphans[0]!;
  assert.match(o.summary, /stream ended \(broken, or closed by the server\) before the answer/, o.summary);
  // The evidence is the proxy's: its request span, and its record of the client's cancel.
  assert.ok(
    o.evidence.some((e) => e.spanName === 'forkwatch.request.settled' && e.side === 'server'),
    JSON.stringify(o.evidence, null, 1),
  );
  assert.ok(o.evidence.some((e) => e.spanName === 'forkwatch.request.received'), JSON.stringify(o.evidence, null, 1));
});

test('healthy resume behind the proxy, stock client, nothing else instrumented: no finding', { timeout: 90_000 }, async () => {
  const d = await detector.get();
  const service = 'proxy-orphan-healthy';
  const { r, proxy } = await runThroughProxy(d, service, { server: 'naive', client: 'stock', healthy: true }, [], false);
  const why = explain(r, proxy);
  assert.equal(r.sessions.rehydrated, 0, why);
  assert.equal(r.resultsReceived, 1, why);
  assert.deepEqual(await settledFindings(d, service, false), [], why);
});
