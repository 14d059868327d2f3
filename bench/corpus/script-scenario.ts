import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TracerProvider } from '@opentelemetry/api';
import { createClientInstrumentation } from '@forkwatch/instrumentation/client';
import { createServerInstrumentation } from '@forkwatch/instrumentation/server';
import { startNaiveServer } from '../../src/demo/naive-server.js';
import { startGuardedServer } from '../../src/demo/guarded-server.js';
import { wireTap } from '../../src/demo/wire-tap.js';
import { describeError } from '../../src/demo/describe-error.js';
import { sequenceRegressions } from '../../src/demo/seed-scenario.js';
import type { ServerSdkKit } from '../../src/demo/sdk-kit.js';
import type { CallRecord, DemoServer, ScenarioResult, ScenarioStep } from '../../src/demo/types.js';
import { sleep, until } from './wait.js';

/** Faults a scripted session plays (no partition): see `runScriptScenario`. */
export type ScriptFault = 'idle-reaped' | 'app-cancel' | 'delete-after-call';

export interface ScriptOptions {
  fault: ScriptFault;
  /** The demo server to start, unless `startServer` starts another. */
  server: 'naive' | 'guarded';
  startServer?: (t: { reapAfterMs: number; steps: number; stepMs: number }) => Promise<DemoServer>;
  inFrontOfServer?: (serverBaseUrl: string) => Promise<{ port: number; what: string; close(): Promise<void> }>;
  /** The demo server's SDK (the client is SDK 1.x either way). Default 1.x. */
  sdk?: ServerSdkKit;
  tracerProviders: { server?: TracerProvider; client?: TracerProvider };
  salt: string;
  tool: (topic: string) => { name: string; arguments: Record<string, unknown> };
  /** Server idle reap, ms: short for `idle-reaped`, else long enough never to happen. */
  reapAfterMs: number;
  stepMs: number;
  requestTimeoutMs: number;
  /** Bound of every wait in the script, ms. */
  maxWaitMs: number;
}

/**
 * A session played by the stock SDK 1.x client (instrumented when a client tracer provider is
 * given) over the wire tap, without a partition:
 * - `idle-reaped`: a call, the session idles until the server reaped it, a second call on the
 *   old session id (a rehydrating server mints a session for it; a guarded one answers 404);
 * - `app-cancel`: the app aborts its call after the first progress notification;
 * - `delete-after-call`: a long call answered, then the client ends the session (`DELETE`).
 * Returns the seed scenario's result shape (wire, calls, server observations).
 */
export async function runScriptScenario(o: ScriptOptions): Promise<ScenarioResult> {
  const t0 = Date.now();
  const steps: ScenarioStep[] = [];
  const step = (what: string): void => void steps.push({ atMs: Date.now() - t0, what });
  const calls: CallRecord[] = [];
  const timers = { reapAfterMs: o.reapAfterMs, steps: 5, stepMs: o.stepMs };
  let server: DemoServer | undefined;
  let front: { port: number; what: string; close(): Promise<void> } | undefined;
  let client: Client | undefined;
  try {
    const instrumentation = o.tracerProviders.server ? createServerInstrumentation({ tracerProvider: o.tracerProviders.server, salt: o.salt }) : undefined;
    server = o.startServer
      ? await o.startServer(timers)
      : o.server === 'naive'
        ? await startNaiveServer({ ...timers, instrumentation, onNote: step, ...(o.sdk ? { sdk: o.sdk } : {}) })
        : await startGuardedServer({ ...timers, instrumentation, onNote: step, ...(o.sdk ? { sdk: o.sdk } : {}) });
    if (o.inFrontOfServer) front = await o.inFrontOfServer(`http://127.0.0.1:${server.port}`);
    const tap = wireTap(fetch);
    const instr = o.tracerProviders.client ? createClientInstrumentation({ tracerProvider: o.tracerProviders.client, salt: o.salt, deliveryTimeoutMs: 250 }) : undefined;
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${front?.port ?? server.port}/mcp`), { fetch: instr ? instr.wrapFetch(tap.fetch) : tap.fetch });
    const c = new Client({ name: 'forkwatch-corpus-app', version: '0.1.0' });
    client = c;
    c.onerror = () => {};
    instr?.attach(transport, c);
    await c.connect(transport, { timeout: o.requestTimeoutMs });
    step('client initialized');

    const call = async (attempt: number, abortAfterProgress = false): Promise<void> => {
      const rec: CallRecord = { attempt, startedAtMs: Date.now() - t0, outcome: 'pending', progress: 0 };
      calls.push(rec);
      const ac = new AbortController();
      try {
        await c.callTool(o.tool(`attempt ${attempt}`), undefined, {
          timeout: o.requestTimeoutMs,
          signal: ac.signal,
          onprogress: () => {
            rec.progress++;
            if (abortAfterProgress) ac.abort(new Error('the app cancelled the call'));
          },
        });
        rec.outcome = 'result';
      } catch (err) {
        rec.error = { source: 'call', ...describeError(err) };
        // A call the app aborted settled by the app's own hand, whatever error the SDK wraps it in.
        // The SDK's own timeout: 1.x throws McpError -32001, 2.x SdkError code 'REQUEST_TIMEOUT'.
        const timedOut = (rec.error.code === -32001 && rec.error.name === 'McpError') || (err as { code?: unknown }).code === 'REQUEST_TIMEOUT';
        rec.outcome = !ac.signal.aborted && timedOut ? 'timeout' : 'error';
      }
      rec.settledAtMs = Date.now() - t0;
      rec.durationMs = rec.settledAtMs - rec.startedAtMs;
      step(`call ${attempt}: ${rec.outcome}${rec.error ? ` (${rec.error.name}: ${rec.error.message})` : ''}`);
    };

    if (o.fault === 'idle-reaped') {
      await call(1);
      const reaped = await until(() => server!.reapedCount() > 0, o.maxWaitMs);
      step(reaped ? 'the server reaped the idle session' : 'no reap within the bound');
      await call(2);
    } else if (o.fault === 'app-cancel') {
      await call(1, true);
      // The server's handler runs on; the session stays until the client closes it.
      await sleep(timers.steps * o.stepMs * 2);
    } else {
      await call(1);
      await transport.terminateSession();
      step('client ended the session (DELETE)');
    }
    return {
      server: o.server,
      client: 'stock',
      healthy: false,
      wallMs: Date.now() - t0,
      steps,
      calls,
      resultsProduced: server.observations.runs.filter((r) => r.resultText !== undefined).length,
      resultsReceived: calls.filter((x) => x.outcome === 'result').length,
      lostResults: [],
      droppedByDedup: [],
      hung: calls.filter((x) => x.outcome === 'timeout' || x.outcome === 'pending').map((x) => ({ attempt: x.attempt, durationMs: x.durationMs ?? 0 })),
      errors: [],
      forks: [],
      resumes: [],
      replayedEventIds: [],
      eventsBeforePartition: [],
      sequenceRegressions: sequenceRegressions(tap.events),
      sessions: {
        initialized: server.observations.created.filter((x) => x.by === 'initialize').length,
        rehydrated: server.observations.created.filter((x) => x.by === 'rehydrate').length,
        reaped: server.reapedCount(),
        reinitializedByClient: 0,
      },
      proxy: { connections: 0, severed: 0, refused: 0, bytesDown: 0 },
      wire: { exchanges: tap.exchanges.map((x) => ({ ...x, at: x.at - t0 })), events: tap.events.map((e) => ({ ...e, at: e.at - t0 })) },
    };
  } finally {
    await client?.close().catch(() => {});
    await front?.close().catch(() => {});
    await server?.close().catch(() => {});
  }
}
