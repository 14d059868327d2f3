import { propagation, type TracerProvider } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { createClientInstrumentation } from '@forkwatch/instrumentation/client';
import { createStatelessClientTap } from '@forkwatch/instrumentation/client/v2';
import { FaultProxy } from '../../src/demo/fault-proxy.js';
import { describeError } from '../../src/demo/describe-error.js';
import type { ScenarioResult, ScenarioStep } from '../../src/demo/types.js';
import { startStatelessServer, STATELESS_TOOL, type StatelessServer, type StatelessToolRun } from './stateless-servers.js';
import { statelessWireTap, type StatelessWireMessage } from './stateless-tap.js';
import { sleep, until } from './wait.js';

/** Faults of the stateless paths (no session, no resume). */
export type StatelessFault = 'cut' | 'cut-retry' | 'app-cancel' | 'healthy';

/** One tool call as the app saw it settle. */
export interface StatelessCallRecord {
  attempt: number;
  outcome: 'result' | 'timeout' | 'error' | 'cancelled' | 'pending';
  progress: number;
  startedAtMs: number;
  settledAtMs?: number;
  error?: string;
}

/** What a stateless run left behind: the app's calls, the client's wire, the server's own account. */
export interface StatelessRun {
  sdk: '1.x' | '2.x';
  fault: StatelessFault;
  calls: StatelessCallRecord[];
  wire: StatelessWireMessage[];
  serverRuns: StatelessToolRun[];
  steps: ScenarioStep[];
  wallMs: number;
}

export interface StatelessScenarioOptions {
  sdk: '1.x' | '2.x';
  fault: StatelessFault;
  tracerProviders: { server?: TracerProvider; client?: TracerProvider };
  /** Instrument the server in-process (false: an uninstrumented server, for the proxy path). */
  instrumentServer: boolean;
  inFrontOfServer?: (serverBaseUrl: string) => Promise<{ port: number; what: string; close(): Promise<void> }>;
  salt: string;
  steps: number;
  stepMs: number;
  requestTimeoutMs: number;
  retryDelayMs: number;
  maxWaitMs: number;
}

type CallOpts = { timeout: number; signal: AbortSignal; onprogress: () => void };

/**
 * One app over a stateless server: a `report` call through the demo's fault proxy, then per
 * fault: `cut` (the call's POST SSE stream cut after its first progress notification; no retry:
 * an SDK 1.x client waits to its timeout, a 2.x one fails the call), `cut-retry` (the same, then
 * the app calls again and gets its answer), `app-cancel` (the app aborts the call after its first
 * progress notification; nothing cut), `healthy` (answered). The app's client is the SDK's own
 * (`sdk`), instrumented when a client tracer provider is given (1.x `attach`, 2.x stateless tap).
 */
export async function runStatelessScenario(o: StatelessScenarioOptions): Promise<StatelessRun> {
  // The client's context in `params._meta` is how a stateless server joins the call's trace.
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const t0 = Date.now();
  const steps: ScenarioStep[] = [];
  const step = (what: string): void => void steps.push({ atMs: Date.now() - t0, what });
  const calls: StatelessCallRecord[] = [];
  let server: StatelessServer | undefined;
  let front: { port: number; close(): Promise<void> } | undefined;
  let fault: FaultProxy | undefined;
  let close: (() => Promise<void>) | undefined;
  const tap = statelessWireTap(fetch);
  try {
    server = await startStatelessServer({ sdk: o.sdk, steps: o.steps, stepMs: o.stepMs, salt: o.salt, ...(o.instrumentServer && o.tracerProviders.server ? { tracerProvider: o.tracerProviders.server } : {}) });
    if (o.inFrontOfServer) front = await o.inFrontOfServer(`http://127.0.0.1:${server.port}`);
    fault = await FaultProxy.start({ targetPort: front?.port ?? server.port, mode: 'refuse' });
    const url = new URL(fault.url('/mcp'));
    const cp = o.tracerProviders.client;
    let callTool: (topic: string, opts: CallOpts) => Promise<unknown>;
    if (o.sdk === '1.x') {
      const instr = cp ? createClientInstrumentation({ tracerProvider: cp, salt: o.salt, deliveryTimeoutMs: 250 }) : undefined;
      const transport = new TransportV1(url, { fetch: instr ? instr.wrapFetch(tap.fetch) : tap.fetch });
      const c = new ClientV1({ name: 'forkwatch-corpus-stateless', version: '0.1.0' });
      c.onerror = () => {};
      instr?.attach(transport, c);
      await c.connect(transport, { timeout: o.requestTimeoutMs });
      callTool = (topic, opts) => c.callTool({ name: STATELESS_TOOL, arguments: { topic } }, undefined, opts);
      close = () => c.close();
    } else {
      const st = cp ? createStatelessClientTap({ tracerProvider: cp }) : undefined;
      const c = new ClientV2({ name: 'forkwatch-corpus-stateless', version: '0.1.0' }, { versionNegotiation: { mode: 'auto' } });
      c.onerror = () => {};
      await c.connect(new TransportV2(url, { fetch: (st ? st.wrapFetch(tap.fetch) : tap.fetch) as never }), { timeout: o.requestTimeoutMs });
      callTool = (topic, opts) => c.callTool({ name: STATELESS_TOOL, arguments: { topic } }, opts);
      close = () => c.close();
    }
    step('client connected');

    const call = async (attempt: number, act?: (ac: AbortController) => void): Promise<void> => {
      const rec: StatelessCallRecord = { attempt, outcome: 'pending', progress: 0, startedAtMs: Date.now() - t0 };
      calls.push(rec);
      const ac = new AbortController();
      let acted = false;
      try {
        await callTool('q3', {
          timeout: o.requestTimeoutMs,
          signal: ac.signal,
          onprogress: () => {
            rec.progress++;
            if (act && !acted) {
              acted = true;
              act(ac);
            }
          },
        });
        rec.outcome = 'result';
      } catch (err) {
        const e = describeError(err);
        rec.error = `${e.name}: ${e.message}`;
        // The SDK's own timeout: 1.x throws McpError -32001, 2.x an SdkError coded REQUEST_TIMEOUT.
        const timedOut = (e.code === -32001 && e.name === 'McpError') || (err as { code?: unknown }).code === 'REQUEST_TIMEOUT';
        rec.outcome = ac.signal.aborted ? 'cancelled' : timedOut ? 'timeout' : 'error';
      }
      rec.settledAtMs = Date.now() - t0;
      step(`call ${attempt}: ${rec.outcome}${rec.error ? ` (${rec.error})` : ''} after ${rec.progress} progress`);
    };

    const f = fault;
    if (o.fault === 'healthy') await call(1);
    else if (o.fault === 'app-cancel') await call(1, (ac) => (step('the app aborts its call'), ac.abort(new Error('the app cancelled the call'))));
    else {
      await call(1, () => (step('the fault proxy cuts the stream'), f.partition()));
      f.heal();
      if (o.fault === 'cut-retry') {
        await sleep(o.retryDelayMs);
        await call(2);
      }
    }
    // Let the server's runs finish (their account is part of the labels) and the SDK's own
    // `notifications/cancelled` POST leave, before the client closes.
    const s = server;
    const done = await until(() => s.runs.every((r) => r.completedAtMs !== undefined) && tap.inflight === 0, o.maxWaitMs);
    step(done ? 'every server run finished' : 'server runs still going at the bound');
    return { sdk: o.sdk, fault: o.fault, calls, wire: tap.messages, serverRuns: server.runs, steps, wallMs: Date.now() - t0 };
  } finally {
    await close?.().catch(() => {});
    await fault?.close().catch(() => {});
    await front?.close().catch(() => {});
    await server?.close().catch(() => {});
    // Back to no global propagator, as the sessionful cells that may follow in this process ran.
    propagation.disable();
  }
}

/** The sessionful result shape the corpus passes around, from a stateless run: steps, calls and hangs only (no session, no ids on the wire). */
export function scenarioOfStateless(s: StatelessRun): ScenarioResult {
  const calls = s.calls.map((c) => ({
    attempt: c.attempt,
    startedAtMs: c.startedAtMs,
    ...(c.settledAtMs !== undefined ? { settledAtMs: c.settledAtMs, durationMs: c.settledAtMs - c.startedAtMs } : {}),
    outcome: c.outcome === 'cancelled' ? ('error' as const) : c.outcome,
    progress: c.progress,
  }));
  return {
    server: 'naive',
    client: 'stock',
    healthy: s.fault === 'healthy',
    wallMs: s.wallMs,
    steps: s.steps,
    calls,
    resultsProduced: s.serverRuns.filter((r) => r.completedAtMs !== undefined).length,
    resultsReceived: s.calls.filter((c) => c.outcome === 'result').length,
    lostResults: [],
    droppedByDedup: [],
    hung: calls.filter((c) => c.outcome === 'timeout' || c.outcome === 'pending').map((c) => ({ attempt: c.attempt, durationMs: c.durationMs ?? 0 })),
    errors: [],
    forks: [],
    resumes: [],
    replayedEventIds: [],
    eventsBeforePartition: [],
    sequenceRegressions: [],
    sessions: { initialized: 0, rehydrated: 0, reaped: 0, reinitializedByClient: 0 },
    proxy: { connections: 0, severed: 0, refused: 0, bytesDown: 0 },
    wire: { exchanges: [], events: [] },
  };
}
