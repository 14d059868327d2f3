/**
 * The stateless arm seen from the proxy alone: an uninstrumented SDK 2.x `createMcpHandler` server
 * (2026-07-28, no session) behind a real `forkwatch proxy` process, a stock 2.x client (no
 * forkwatch at all) through the fault proxy, which cuts the response stream mid tool call; a real
 * `forkwatch serve` process gets only the proxy's spans. A call whose stream broke and that nobody
 * re-issued is reported (`orphaned_request`); a call re-issued after the cut is not.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import { FaultProxy } from '../../src/demo/fault-proxy.js';
import type { Finding } from '../../src/model/finding.js';
import { startDetector, waitFor, type DetectorProcess } from './helpers/detector.js';
import { findingsOf } from './helpers/proxy-scenario.js';
import { startProxyProcess } from './helpers/proxy-process.js';

const STEPS = 6;
const STEP_MS = 60;
const REISSUE_WINDOW_MS = 6000;
/** The stateless client learns of the cut only at its timeout: the re-issue comes after it, within the window. */
const CALL_TIMEOUT_MS = 2500;

let detector: DetectorProcess | undefined;
const getDetector = async (): Promise<DetectorProcess> =>
  (detector ??= await startDetector({ args: ['--decision-window-ms', '1000', '--tick-interval-ms', '100', '--reissue-window-ms', String(REISSUE_WINDOW_MS)] }));
after(async () => void (await detector?.kill()));

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** One charge call cut after its first progress notification; `reissue`: the app calls again with the same arguments. */
async function run(service: string, reissue: boolean): Promise<{ proxyOutput: string }> {
  const d = await getDetector();
  const runs = { started: 0, completed: 0, stopped: 0 };
  const factory = (): McpServer => {
    const s = new McpServer({ name: 'stateless-behind-proxy', version: '0.1.0' });
    s.registerTool(
      'charge',
      { description: 'charges a card slowly', inputSchema: fromJsonSchema<{ card: string; cents: number }>({ type: 'object', properties: { card: { type: 'string' }, cents: { type: 'number' } } }) },
      async (args, ctx) => {
        runs.started++;
        const token = ctx.mcpReq._meta?.progressToken;
        for (let i = 1; i <= STEPS; i++) {
          await new Promise((r) => setTimeout(r, STEP_MS));
          // A server that stops on the close: the proxy cannot tell, and need not.
          if (ctx.mcpReq.signal.aborted) {
            runs.stopped++;
            throw new Error('cancelled: the response stream closed');
          }
          if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: STEPS } }).catch(() => {});
        }
        runs.completed++;
        return { content: [{ type: 'text' as const, text: `charged ${args.cents} to ${args.card}` }] };
      },
    );
    return s;
  };
  const handler = createMcpHandler(factory);
  const http: Server = createServer(toNodeHandler(handler) as never);
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  const port = (http.address() as { port: number }).port;
  const px = await startProxyProcess({ upstream: `http://127.0.0.1:${port}`, otlpEndpoint: d.otlpUrl, serviceName: service });
  const fault = await FaultProxy.start({ targetPort: px.port, mode: 'refuse' });
  const client = new Client({ name: 'pay-app', version: '0.1.0' }, { versionNegotiation: { mode: 'auto' } });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(fault.url('/mcp'))), { timeout: 5_000 });
    const args = { card: 'tok_4242', cents: 1999 };
    let progress = 0;
    const first = client
      .callTool({ name: 'charge', arguments: args }, { timeout: CALL_TIMEOUT_MS, onprogress: () => void progress++ })
      .then(() => 'answered' as const, () => 'failed' as const);
    await until(() => progress >= 1, 'the first progress notification');
    fault.partition();
    assert.equal(await first, 'failed', 'the cut call did not get its answer');
    fault.heal();
    if (reissue) {
      const again = await client.callTool({ name: 'charge', arguments: args }, { timeout: 10_000 });
      assert.match(JSON.stringify(again), /charged 1999 to tok_4242/);
    }
    await until(() => runs.completed + runs.stopped >= runs.started, 'every handler to finish');
  } finally {
    await client.close().catch(() => {});
    await fault.close();
    await px.stop();
    await handler.close();
    await new Promise<void>((r) => http.close(() => r()));
  }
  return { proxyOutput: px.output() };
}

/** Findings of `service` once they stop changing, after the re-issue window has surely passed. */
async function settled(service: string, expectSome: boolean): Promise<Finding[]> {
  const d = await getDetector();
  const since = Date.now();
  let last = -1;
  let stable = 0;
  return waitFor(
    async () => {
      const f = await findingsOf(d, service);
      stable = f.length === last ? stable + 1 : 0;
      last = f.length;
      const windowPassed = Date.now() - since > REISSUE_WINDOW_MS + 1500;
      return windowPassed && stable >= 3 && (f.length > 0 || !expectSome) ? f : undefined;
    },
    30_000,
    500,
  );
}

test('stateless server behind the proxy, nothing else instrumented: a cut call never re-issued is an orphaned_request', { timeout: 90_000 }, async () => {
  const service = 'proxy-stateless-orphan';
  const { proxyOutput } = await run(service, false);
  const f = await settled(service, true);
  assert.deepEqual(
    f.map((x) => x.kind),
    ['orphaned_request'],
    proxyOutput,
  );
  const orphan = f[0]!;
  assert.ok(orphan.evidence.every((e) => e.side === 'server'), 'found from the proxy (server-side) spans alone');
  assert.ok(orphan.evidence.some((e) => e.spanName === 'forkwatch.request.handled'), JSON.stringify(orphan.evidence));
});

test('stateless server behind the proxy: a cut call re-issued by the app is no orphan', { timeout: 90_000 }, async () => {
  const service = 'proxy-stateless-reissued';
  const { proxyOutput } = await run(service, true);
  assert.deepEqual(await settled(service, false), [], proxyOutput);
});
