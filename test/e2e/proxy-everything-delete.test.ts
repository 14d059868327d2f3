/**
 * Issue 24, defect 2: `@modelcontextprotocol/server-everything` behind a real `forkwatch proxy`
 * process, the stock SDK client, nothing else instrumented. listTools, echo, a long-running
 * operation with 3 progress notifications (its result received), then `terminateSession`
 * (DELETE). The call was answered: no finding, and the proxy recorded every event of the call's
 * SSE answer (the 3 progress notifications and the result), not only those before its
 * `request.received` went out.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { reservePort } from './helpers/reserve-port.js';
import { startExternalServer } from './helpers/external-server.js';
import { startProxyProcess, type ProxyProcess } from './helpers/proxy-process.js';
import { PROXY_E2E_SALT, settledFindings, sharedDetector } from './helpers/proxy-scenario.js';
import { waitFor } from './helpers/detector.js';
import { sessionKey } from '../../packages/instrumentation/src/common/session-key.js';
import type { SessionLineage } from '../../src/model/lineage.js';

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const detector = sharedDetector();
const stops: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const s of stops.reverse()) await s();
  await detector.stop();
});

for (const waitBeforeDeleteMs of [0, 1500]) {
  test(`server-everything behind the proxy: a long call answered, then DELETE ${waitBeforeDeleteMs} ms later, is no orphan and every event is recorded`, { timeout: 90_000 }, async () => {
    const d = await detector.get();
    const service = `proxy-everything-delete-${waitBeforeDeleteMs}`;
    const server = await startExternalServer(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { PORT: String(await reservePort()) }, ready: /listening on port (\d+)/ });
    stops.push(() => server.close());
    const px: ProxyProcess = await startProxyProcess({ upstream: `http://127.0.0.1:${server.port}`, otlpEndpoint: d.otlpUrl, serviceName: service, env: { FORKWATCH_SESSION_SALT: PROXY_E2E_SALT } });
    stops.push(() => px.stop());
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${px.port}/mcp`));
    const client = new Client({ name: 'stock', version: '1.0.0' });
    await client.connect(transport);
    const sid = transport.sessionId!;
    await client.listTools();
    await client.callTool({ name: 'echo', arguments: { message: 'hi' } });
    let progress = 0;
    const result = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 3, steps: 3 } }, undefined, {
      onprogress: () => progress++,
      timeout: 30_000,
    });
    assert.equal(progress, 3);
    assert.match(JSON.stringify(result), /completed/);
    if (waitBeforeDeleteMs > 0) await new Promise((r) => setTimeout(r, waitBeforeDeleteMs));
    await transport.terminateSession();
    await client.close();
    await px.stop();

    const f = await settledFindings(d, service, false);
    assert.deepEqual(f.map((x) => `${x.kind}: ${x.summary}`), [], px.output());
    // The proxy's record of the call: its request (late, it outlived the span delay) and, after
    // it, every event of its answer stream.
    const key = sessionKey(sid, PROXY_E2E_SALT);
    const lineage = await waitFor(async () => {
      const res = await fetch(`${d.httpUrl}/api/v1/sessions/${encodeURIComponent(key)}`);
      if (res.status !== 200) return undefined;
      const l = (await res.json()) as SessionLineage;
      return l.requests.some((r) => r.requestId === '3') ? l : undefined;
    }, 20_000, 200);
    const events = JSON.stringify(lineage.events.map((e) => [e.eventId, e.jsonrpcKind, e.jsonrpcId]));
    assert.equal(lineage.events.filter((e) => e.jsonrpcKind === 'notification').length, 3, events);
    assert.ok(
      lineage.events.some((e) => e.jsonrpcKind === 'response' && e.jsonrpcId === '3'),
      `the call's answer is recorded\n${events}`,
    );
  });
}
