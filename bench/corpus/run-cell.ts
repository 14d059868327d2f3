import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { runSeedScenario } from '../../src/demo/seed-scenario.js';
import type { ScenarioResult, SeedScenarioOptions } from '../../src/demo/types.js';
import { startProxyProcess, type ProxyProcess } from '../../test/e2e/helpers/proxy-process.js';
import { CLIENT_SDK_V2, SERVER_SDK_V2 } from '../../test/e2e/helpers/sdk-v2-kit.js';
import { startCaptureSink } from './capture-sink.js';
import { PYTHON_CLIENTS, SCRIPT_FAULTS, type CorpusCell } from './corpus-cell.js';
import { runScriptScenario, type ScriptFault } from './script-scenario.js';
import { SLOW_REPORT_TOOL } from '../../src/demo/slow-report-tool.js';
import { EVERYTHING_TOOL, externalServer, type ExternalServer } from './corpus-servers.js';
import { between, seededRandom } from './seeded-random.js';
import { pythonInProcessServer } from './python-inprocess.js';
import { reject409Server, restartDemoServer } from './restart-faults.js';
import { runRestartScenario } from './restart-scenario.js';
import { runPythonClientScenario } from './python-client-scenario.js';
import { pythonVenv } from '../../test/e2e/helpers/python-venv.js';
import { runStatelessScenario, scenarioOfStateless, type StatelessFault, type StatelessRun } from './stateless-scenario.js';

/** The fleet salt of every corpus run (clients, in-process servers, proxies). */
export const CORPUS_SALT = 'corpus-salt';

/** What one run left behind: the wire, the servers' own account, the OTLP capture. */
export interface CellRun {
  cell: CorpusCell;
  r: ScenarioResult;
  /** Sessions a server created for a client-supplied id, by its own account (demo observations, a third-party server's log). */
  serverRehydrations: number;
  /** The app dedups SSE events by `(session id, event id)` (the seed's stock app does; connectGuarded and the scripted session do not). */
  appDedup: boolean;
  /** Every OTLP JSON export request of the run (apps and proxy). */
  capture: string[];
  /** Service names the run's spans carry. */
  services: string[];
  /** What the proxy and a third-party server printed, for a mismatch's explanation. */
  logs: string;
  /** A stateless path's run (labelled by stateless-labels.ts); `r` then only carries its steps and calls. */
  stateless?: StatelessRun;
}

/**
 * Runs one cell: the seed's scenario (real SDK server and client over loopback, the fault proxy
 * cutting the stream) on the cell's path, every forkwatch span exported as OTLP JSON to a capture
 * sink that forwards it to `detectorOtlpUrl` (the live detector) when given. Timers are the
 * seed's at scale 2 (every hop may be a process on a loaded machine), jittered by ±15 % from the
 * cell's seed.
 */
export async function runCell(cell: CorpusCell, detectorOtlpUrl: string | undefined): Promise<CellRun> {
  const sink = await startCaptureSink(detectorOtlpUrl);
  const rnd = seededRandom(cell.seed * 7919 + hash(`${cell.path.name} ${cell.server} ${cell.client} ${cell.fault}`));
  const jitter = (ms: number): number => Math.round((ms * between(rnd, 85, 115)) / 100);
  const provider = (service: string): BasicTracerProvider =>
    new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': service }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${sink.url}/v1/traces` }), { scheduledDelayMillis: 100 })],
    });
  const inProcess = cell.path.via === 'in-process';
  // A Python server instruments itself in its own process and exports to the sink on its own.
  const pythonServer = pythonInProcessServer(cell, sink.url, CORPUS_SALT);
  const serverProvider = inProcess && !pythonServer ? provider(`${cell.id}-server`) : undefined;
  // A Python client instruments itself in its own process and exports to the sink as `<id>-client`.
  const pythonClient = PYTHON_CLIENTS.includes(cell.client);
  const clientProvider = cell.client === 'stock' || pythonClient ? undefined : provider(`${cell.id}-client`);
  const external = pythonServer ?? externalServer(cell.server);
  let started: ExternalServer | undefined;
  let px: ProxyProcess | undefined;
  const v2 = cell.path.sdk === '2.x';
  const everything = cell.server === 'everything';
  const opts: SeedScenarioOptions = {
    server: cell.server === 'guarded' ? 'guarded' : 'naive',
    client: cell.client === 'guarded' || cell.client === 'python-guarded' ? 'guarded' : 'stock',
    healthy: cell.fault === 'cut-healthy' || cell.fault === 'reject-409',
    scale: 2,
    salt: CORPUS_SALT,
    requestTimeoutMs: everything ? 5000 : 3000,
    reconnectDelayMs: jitter(900),
    stepMs: jitter(60),
    retryCallDelayMs: jitter(100),
    ...(everything ? { tool: EVERYTHING_TOOL, partitionAfterEvents: 5 } : {}),
    ...(external ? { maxRunMs: 45_000, startServer: async (t) => (started = await external(t)) } : {}),
    ...(cell.fault === 'reject-409' ? { startServer: reject409Server(serverProvider, CORPUS_SALT, v2 ? SERVER_SDK_V2 : undefined) } : {}),
    ...(v2 ? { sdk: { server: SERVER_SDK_V2, client: CLIENT_SDK_V2 } } : {}),
    tracerProviders: { ...(serverProvider ? { server: serverProvider } : {}), ...(clientProvider ? { client: clientProvider } : {}) },
    ...(inProcess
      ? {}
      : {
          inFrontOfServer: async (url: string) => {
            const args = cell.path.via === 'proxy --guard' ? ['--guard', '--guard-hold-ms', '300'] : [];
            px = await startProxyProcess({
              upstream: url,
              otlpEndpoint: sink.url,
              serviceName: `${cell.id}-proxy`,
              args,
              env: { FORKWATCH_SESSION_SALT: CORPUS_SALT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
            });
            return { port: px.port, what: `forkwatch proxy ${args.join(' ')}`, close: async () => void (await px!.stop()) };
          },
        }),
  };
  let r: ScenarioResult;
  let capture: string[];
  let stateless: StatelessRun | undefined;
  let restartOutput: string | undefined;
  let pythonClientOutput: string | undefined;
  try {
    if (cell.path.stateless) {
      // The 1.x client waits to its timeout on a cut: short, so the orphan's cell stays seconds long.
      stateless = await runStatelessScenario({
        sdk: cell.path.sdk,
        fault: cell.fault as StatelessFault,
        tracerProviders: opts.tracerProviders ?? {},
        instrumentServer: inProcess,
        ...(opts.inFrontOfServer ? { inFrontOfServer: opts.inFrontOfServer } : {}),
        salt: CORPUS_SALT,
        steps: 8,
        stepMs: jitter(60),
        requestTimeoutMs: 2500,
        retryDelayMs: jitter(100),
        maxWaitMs: 15_000,
      });
    }
    if (pythonClient) {
      const python = pythonVenv();
      if (python === undefined) throw new Error('the Python client needs the virtualenv (FORKWATCH_PYTHON_VENV)');
      const py = await runPythonClientScenario({
        ...opts,
        python,
        kind: cell.client === 'python-guarded' ? 'guarded' : 'instrumented',
        otlpUrl: sink.url,
        service: `${cell.id}-client`,
      });
      pythonClientOutput = py.output;
      r = py.r;
    } else if (cell.fault === 'server-restart' || cell.fault === 'refused-restart') {
      // Each incarnation is a new process (third-party servers) or a new in-process server.
      // The Python server's call ran out before its kill took effect (its exit takes ~0.2 s): a longer call keeps the restart mid-call.
      const python = cell.server === 'python' || cell.server === 'python-naive';
      const timers = { reapAfterMs: 60_000, steps: python ? 20 : 5, stepMs: opts.stepMs ?? 60 };
      const restart = await runRestartScenario({
        startServer: external ? () => external(timers) : restartDemoServer(opts.server, serverProvider, CORPUS_SALT, v2 ? SERVER_SDK_V2 : undefined, timers),
        ...(opts.inFrontOfServer ? { inFrontOfServer: opts.inFrontOfServer } : {}),
        ...(clientProvider ? { clientTracerProvider: clientProvider } : {}),
        salt: CORPUS_SALT,
        tool: opts.tool ?? ((topic) => ({ name: SLOW_REPORT_TOOL, arguments: { topic } })),
        reconnectDelayMs: opts.reconnectDelayMs ?? 900,
        requestTimeoutMs: opts.requestTimeoutMs ?? 3000,
        maxWaitMs: 15_000,
        // Past the client's two reconnects (after d and 1.5 d) and their answers.
        ...(cell.fault === 'refused-restart' ? { refuseMs: Math.round((opts.reconnectDelayMs ?? 900) * 2.5) + 300 } : {}),
      });
      restartOutput = restart.serverOutput;
      r = restart.r;
    } else {
      r = stateless
        ? scenarioOfStateless(stateless)
        : SCRIPT_FAULTS.includes(cell.fault)
        ? await runScriptScenario({
            fault: cell.fault as ScriptFault,
            server: opts.server,
            ...(opts.startServer ? { startServer: opts.startServer } : {}),
            ...(opts.inFrontOfServer ? { inFrontOfServer: opts.inFrontOfServer } : {}),
            ...(v2 ? { sdk: SERVER_SDK_V2 } : {}),
            tracerProviders: opts.tracerProviders ?? {},
            salt: CORPUS_SALT,
            tool: opts.tool ?? ((topic) => ({ name: SLOW_REPORT_TOOL, arguments: { topic } })),
            reapAfterMs: cell.fault === 'idle-reaped' ? jitter(600) : 60_000,
            stepMs: opts.stepMs ?? 60,
            requestTimeoutMs: opts.requestTimeoutMs ?? 3000,
            maxWaitMs: 15_000,
          })
        : await runSeedScenario(opts);
    }
  } finally {
    // Read once every exporter flushed: the proxy flushes on SIGTERM (the scenario stopped it).
    await Promise.allSettled([serverProvider?.shutdown(), clientProvider?.shutdown(), px?.stop()]);
    capture = sink.lines();
    await sink.close();
  }
  const out = restartOutput ?? started?.output() ?? '';
  return {
    cell,
    r,
    // The Python guarded client (connect_guarded) has no app dedup, as connectGuarded.
    appDedup: !stateless && !SCRIPT_FAULTS.includes(cell.fault) && cell.fault !== 'server-restart' && cell.fault !== 'refused-restart' && cell.client !== 'guarded' && cell.client !== 'python-guarded',
    serverRehydrations: r.sessions.rehydrated + (out.match(/^rehydrated /gm) ?? []).length,
    capture,
    services: [`${cell.id}-server`, `${cell.id}-proxy`, `${cell.id}-client`],
    logs: `--- proxy ---\n${px?.output() ?? ''}\n--- server ---\n${out}${pythonClientOutput !== undefined ? `\n--- python client ---\n${pythonClientOutput}` : ''}`,
    ...(stateless ? { stateless } : {}),
  };
}

function hash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) >>> 0;
  return h;
}
