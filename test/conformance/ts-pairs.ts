/**
 * The TypeScript pair of the conformance scenarios that the seed's script (runSeedScenario) does not
 * play as is: `cancel` (the app aborts its slow call, then closes the session) and the guarded
 * server of `409`. Real SDK client and server over loopback HTTP, both instrumented; the Python pair
 * of the same scenarios is test/fixtures/python/conformance_pair.py.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TracerProvider } from '@opentelemetry/api';
import { createClientInstrumentation } from '@forkwatch/instrumentation/client';
import { createServerInstrumentation } from '@forkwatch/instrumentation/server';
import { startGuardedServer } from '../../src/demo/guarded-server.js';
import { startNaiveServer } from '../../src/demo/naive-server.js';
import type { DemoServer } from '../../src/demo/types.js';

/** As the Python pair's: five steps of 150 ms (the call outlives the cancel and the cut). */
const STEPS = 5;
const STEP_MS = 150;

async function waitFor(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * `cancel`: the stock SDK client's app aborts a slow call 300 ms after its first progress
 * notification (the server's request.received, held 100 ms, went out before), waits until the
 * server has read the `notifications/cancelled` POST, then closes the session (DELETE).
 */
export async function runTsCancel(p: { server: TracerProvider; client: TracerProvider }, salt: string): Promise<void> {
  const server = await startNaiveServer({
    reapAfterMs: 30_000,
    steps: STEPS,
    stepMs: STEP_MS,
    rehydrate: false,
    instrumentation: createServerInstrumentation({ tracerProvider: p.server, salt, requestSpanDelayMs: 100 }),
  });
  const instr = createClientInstrumentation({ tracerProvider: p.client, salt, deliveryTimeoutMs: 250 });
  // The SDK server reads a notification's POST body before answering it 202: from then on its
  // instrumentation has seen the cancel.
  let cancelAnswered = false;
  const tapFetch: typeof fetch = async (url, init) => {
    const res = await fetch(url, init);
    if (typeof init?.body === 'string' && init.body.includes('notifications/cancelled')) cancelAnswered = true;
    return res;
  };
  const transport = new StreamableHTTPClientTransport(new URL(server.url), { fetch: instr.wrapFetch(tapFetch) });
  const client = new Client({ name: 'conformance-app', version: '0.1.0' });
  instr.attach(transport, client);
  try {
    await client.connect(transport);
    const ac = new AbortController();
    let progressed = false;
    const call = client
      .callTool({ name: 'slow_report', arguments: { topic: 'cancel' } }, undefined, { signal: ac.signal, timeout: 10_000, onprogress: () => void (progressed = true) })
      .then(
        () => 'answered',
        () => 'aborted',
      );
    await waitFor(() => progressed, 'the first progress notification');
    await new Promise((r) => setTimeout(r, 300));
    ac.abort(new Error('the app cancelled the call'));
    if ((await call) !== 'aborted') throw new Error('the call was answered before the app cancelled it');
    await waitFor(() => cancelAnswered, 'the cancel read by the server');
    await transport.terminateSession();
  } finally {
    await client.close().catch(() => undefined);
    await server.close();
  }
}

/**
 * `409`'s server: the guarded server (createSessionGuard) with a two-event log, so that by the
 * client's resume the cut call's cursor is evicted and the resume is answered 409.
 */
export function guarded409(tracerProvider: TracerProvider, salt: string): (t: { reapAfterMs: number; steps: number; stepMs: number }) => Promise<DemoServer> {
  return async (t) =>
    startGuardedServer({ ...t, maxEventsPerSession: 2, instrumentation: createServerInstrumentation({ tracerProvider, salt }) });
}
