import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TracerProvider } from '@opentelemetry/api';
import { createClientInstrumentation } from '@forkwatch/instrumentation/client';
import { wireTap } from '../../src/demo/wire-tap.js';
import { describeError } from '../../src/demo/describe-error.js';
import { sequenceRegressions } from '../../src/demo/seed-scenario.js';
import type { CallRecord, DemoServer, DemoServerObservations, ScenarioResult, ScenarioStep } from '../../src/demo/types.js';
import { startRestartForwarder } from './restart-forwarder.js';
import { sleep, until } from './wait.js';

export interface RestartOptions {
  /** Starts one server incarnation (called twice: before and after the restart); each gets fresh state, as a new process would. */
  startServer: () => Promise<DemoServer & { output?(): string }>;
  inFrontOfServer?: (serverBaseUrl: string) => Promise<{ port: number; what: string; close(): Promise<void> }>;
  clientTracerProvider?: TracerProvider;
  salt: string;
  tool: (topic: string) => { name: string; arguments: Record<string, unknown> };
  reconnectDelayMs: number;
  requestTimeoutMs: number;
  maxWaitMs: number;
  /**
   * `refused-restart`: connections in the restart window are refused for this long, ms (the
   * client's reconnects fail) before the new server listens. Default: held (`server-restart`).
   */
  refuseMs?: number;
}

export interface RestartRun {
  r: ScenarioResult;
  /** Both incarnations' own output (a third-party server's log), in order. */
  serverOutput: string;
}

/**
 * `server-restart`: the stock SDK 1.x client (instrumented when a tracer provider is given) calls
 * a long tool; at its first progress notification the server is stopped (every stream through it
 * cut) and a fresh one started behind the same address. The client's resume of the cut call
 * (`GET`, its `Mcp-Session-Id` and `Last-Event-ID`) meets a server that never knew the session:
 * a guarded or stock server rejects it (404, or server-everything's 400), a rehydrating one mints
 * a session for the id. The app does not retry: a call the resume cannot finish waits to its timeout.
 */
export async function runRestartScenario(o: RestartOptions): Promise<RestartRun> {
  const t0 = Date.now();
  const steps: ScenarioStep[] = [];
  const step = (what: string): void => void steps.push({ atMs: Date.now() - t0, what });
  const calls: CallRecord[] = [];
  const fwd = await startRestartForwarder();
  const servers: (DemoServer & { output?(): string })[] = [];
  let front: { port: number; what: string; close(): Promise<void> } | undefined;
  let client: Client | undefined;
  const tap = wireTap(fetch);
  try {
    servers.push(await o.startServer());
    fwd.retarget(servers[0]!.port);
    if (o.inFrontOfServer) front = await o.inFrontOfServer(`http://127.0.0.1:${fwd.port}`);
    const instr = o.clientTracerProvider ? createClientInstrumentation({ tracerProvider: o.clientTracerProvider, salt: o.salt, deliveryTimeoutMs: 250 }) : undefined;
    const d = o.reconnectDelayMs;
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${front?.port ?? fwd.port}/mcp`), {
      fetch: instr ? instr.wrapFetch(tap.fetch) : tap.fetch,
      reconnectionOptions: { initialReconnectionDelay: d, maxReconnectionDelay: d * 4, reconnectionDelayGrowFactor: 1.5, maxRetries: 2 },
    });
    const c = new Client({ name: 'forkwatch-corpus-app', version: '0.1.0' });
    client = c;
    c.onerror = () => {};
    instr?.attach(transport, c);
    await c.connect(transport, { timeout: o.requestTimeoutMs });
    step('client initialized');

    const rec: CallRecord = { attempt: 1, startedAtMs: Date.now() - t0, outcome: 'pending', progress: 0 };
    calls.push(rec);
    const settled = c
      .callTool(o.tool('attempt 1'), undefined, { timeout: o.requestTimeoutMs, onprogress: () => void rec.progress++ })
      .then(
        () => void (rec.outcome = 'result'),
        (err: unknown) => {
          rec.error = { source: 'call', ...describeError(err) };
          const timedOut = (rec.error.code === -32001 && rec.error.name === 'McpError') || (err as { code?: unknown }).code === 'REQUEST_TIMEOUT';
          rec.outcome = timedOut ? 'timeout' : 'error';
        },
      )
      .finally(() => {
        rec.settledAtMs = Date.now() - t0;
        rec.durationMs = rec.settledAtMs - rec.startedAtMs;
        step(`call 1: ${rec.outcome}${rec.error ? ` (${rec.error.name}: ${rec.error.message})` : ''}`);
      });
    if (await until(() => rec.progress > 0 || rec.outcome !== 'pending', o.maxWaitMs)) {
      // server-restart: held, not refused, so the resume meets the new server. refused-restart:
      // refused until the client's reconnects are spent.
      fwd.retarget(o.refuseMs !== undefined ? 'refuse' : undefined);
      await servers[0]!.close();
      step('server stopped mid-call');
      if (o.refuseMs !== undefined) {
        await sleep(o.refuseMs);
        step(`connections refused for ${o.refuseMs} ms`);
      }
      servers.push(await o.startServer());
      fwd.retarget(servers[1]!.port);
      step('server restarted');
    } else step('no progress within the bound: no restart');
    await settled;
    // Let the stock client's notifications/cancelled leave (the proxy's evidence of the hang).
    const drainUntil = Date.now() + 2000;
    while (tap.inflight > 0 && Date.now() < drainUntil) await sleep(10);
  } finally {
    await client?.close().catch(() => {});
    await front?.close().catch(() => {});
    for (const s of servers) await s.close().catch(() => {});
    await fwd.close();
  }
  const obs: DemoServerObservations = { created: [], reaped: [], answered: [], runs: [] };
  for (const s of servers) for (const k of ['created', 'reaped', 'answered', 'runs'] as const) (obs[k] as unknown[]).push(...s.observations[k]);
  const r: ScenarioResult = {
    server: servers[0]?.kind === 'guarded' ? 'guarded' : 'naive',
    client: 'stock',
    healthy: false,
    wallMs: Date.now() - t0,
    steps,
    calls,
    resultsProduced: obs.runs.filter((x) => x.resultText !== undefined).length,
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
      initialized: obs.created.filter((x) => x.by === 'initialize').length,
      rehydrated: obs.created.filter((x) => x.by === 'rehydrate').length,
      reaped: servers.reduce((n, s) => n + s.reapedCount(), 0),
      reinitializedByClient: 0,
    },
    proxy: { connections: 0, severed: 0, refused: 0, bytesDown: 0 },
    wire: { exchanges: tap.exchanges.map((x) => ({ ...x, at: x.at - t0 })), events: tap.events.map((e) => ({ ...e, at: e.at - t0 })) },
  };
  return { r, serverOutput: servers.map((s) => s.output?.() ?? '').join('\n--- restarted ---\n') };
}
