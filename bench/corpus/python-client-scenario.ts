import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createServerInstrumentation } from '@forkwatch/instrumentation/server';
import { FaultProxy } from '../../src/demo/fault-proxy.js';
import { startGuardedServer } from '../../src/demo/guarded-server.js';
import { startNaiveServer } from '../../src/demo/naive-server.js';
import { scenarioTimers, sequenceRegressions } from '../../src/demo/seed-scenario.js';
import type { TappedEvent, TappedExchange } from '../../src/demo/wire-tap.js';
import type { CallRecord, DemoServer, ScenarioResult, ScenarioStep, SeedScenarioOptions } from '../../src/demo/types.js';
import { droppedOnWire, parsePythonClientOutput, type PythonClientOutput } from './python-client-output.js';
import { startTapForwarder, type TapForwarder } from './tap-forwarder.js';
import { sleep } from './wait.js';

const SCRIPT = fileURLToPath(new URL('./python_client.py', import.meta.url));

/** While waiting for the reap before healing, how often to look, ms (as the seed's). */
const HEAL_POLL_MS = 10;

export interface PythonClientScenarioOptions extends SeedScenarioOptions {
  /** The virtualenv's python (mcp 2.3.0, forkwatch_instrumentation). */
  python: string;
  /** `instrumented`: ClientSession + ClientInstrumentation + the app's naive dedup; `guarded`: connect_guarded. */
  kind: 'instrumented' | 'guarded';
  /** OTLP/HTTP base URL the client exports JSON to (the cell's capture sink). */
  otlpUrl: string;
  /** `service.name` of the client's spans. */
  service: string;
}

/** The run plus what the Python process printed (its stderr included), for a mismatch's explanation. */
export interface PythonClientRun {
  r: ScenarioResult;
  output: string;
  /** `(session id, event id)` the app's dedup dropped; null when the app has none (guarded). */
  droppedByDedup: Array<{ sessionId: string; eventId: string }> | null;
}

/**
 * The seed scenario (src/demo/seed-scenario.ts) with the Python `mcp` client
 * (bench/corpus/python_client.py) as the app: the same server (the demo's naive or guarded one,
 * instrumented in this process, or `startServer`'s), the same fault proxy in `hold` mode and the
 * same partition rule (after the `partitionAfterEvents`-th id-bearing event the client's wire
 * saw; in a forking run healed only once the server reaped), and the same retry rule (once the
 * SDK's resume was answered or call 1 settled, after `retryCallDelayMs`, the app calls again when
 * call 1 has no result; the script decides that itself). The wire is recorded by a tapping
 * forwarder between the Python client and the fault proxy (tap-forwarder.ts), in the seed's tap
 * shape. The client's reconnect delay is the SDK's own (1 s, or the server's `retry`), not
 * `reconnectDelayMs`.
 */
export async function runPythonClientScenario(opts: PythonClientScenarioOptions): Promise<PythonClientRun> {
  const t = scenarioTimers(opts);
  const t0 = Date.now();
  const deadline = t0 + t.maxRunMs;
  const steps: ScenarioStep[] = [];
  const step = (what: string): void => void steps.push({ atMs: Date.now() - t0, what });
  let server: DemoServer | undefined;
  let proxy: FaultProxy | undefined;
  let fwd: TapForwarder | undefined;
  let front: Awaited<ReturnType<NonNullable<SeedScenarioOptions['inFrontOfServer']>>> | undefined;
  let healTimer: NodeJS.Timeout | undefined;
  let child: ReturnType<typeof spawn> | undefined;
  let output = '';
  const eventsBeforePartition: string[] = [];
  let partitionedAt: number | undefined;
  let onPartition!: () => void;
  const partitioned = new Promise<void>((r) => (onPartition = r));
  let onResume!: () => void;
  const resumed = new Promise<void>((r) => (onResume = r));
  const resumeExchanges = new Set<number>();
  try {
    const instrumentation = opts.tracerProviders?.server ? createServerInstrumentation({ tracerProvider: opts.tracerProviders.server, salt: opts.salt ?? '' }) : undefined;
    const serverOpts = { reapAfterMs: t.reapAfterMs, steps: t.steps, stepMs: t.stepMs, instrumentation, onNote: step, ...(opts.sdk?.server ? { sdk: opts.sdk.server } : {}) };
    server = opts.startServer
      ? await opts.startServer({ reapAfterMs: t.reapAfterMs, steps: t.steps, stepMs: t.stepMs })
      : opts.server === 'naive'
        ? await startNaiveServer(serverOpts)
        : await startGuardedServer(serverOpts);
    const srv = server;
    step(`${opts.server} MCP server on 127.0.0.1:${server.port} (reaps idle sessions after ${t.reapAfterMs} ms)`);
    if (opts.inFrontOfServer) {
      front = await opts.inFrontOfServer(`http://127.0.0.1:${server.port}`);
      step(`in front of the server: ${front.what} on 127.0.0.1:${front.port}`);
    }
    const px = await FaultProxy.start({ targetPort: front?.port ?? server.port, mode: 'hold' });
    proxy = px;
    const healthy = opts.healthy ?? false;
    let idEvents = 0;
    fwd = await startTapForwarder(px.url('/'), {
      onEvent: (e: TappedEvent) => {
        if (partitionedAt !== undefined) return;
        idEvents++;
        eventsBeforePartition.push(e.eventId);
        if (idEvents < t.partitionAfterEvents) return;
        px.partition();
        partitionedAt = Date.now();
        step(`partition after event ${e.eventId}: every connection cut`);
        const reapedBefore = srv.reapedCount();
        const healWhenReady = (): void => {
          const waited = Date.now() - partitionedAt!;
          const ready = waited >= t.partitionMs && (healthy || srv.reapedCount() > reapedBefore || Date.now() >= deadline);
          if (!ready) {
            healTimer = setTimeout(healWhenReady, waited < t.partitionMs ? t.partitionMs - waited : HEAL_POLL_MS);
            return;
          }
          px.heal();
          step(`network healed after ${waited} ms`);
        };
        healTimer = setTimeout(healWhenReady, t.partitionMs);
        onPartition();
      },
      onExchange: (x: TappedExchange, i: number) => {
        if (x.lastEventId === undefined) return;
        resumeExchanges.add(i);
        step(`resume: ${x.method} Last-Event-ID ${x.lastEventId} answered ${x.status}`);
        onResume();
      },
    });
    const tap = fwd.tap;

    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const proc = spawn(
      opts.python,
      [
        SCRIPT,
        '--url', fwd.url('/mcp'),
        '--kind', opts.kind,
        '--otlp-url', opts.otlpUrl,
        '--service', opts.service,
        '--salt', opts.salt ?? '',
        '--request-timeout-s', String(t.requestTimeoutMs / 1000),
        '--delivery-timeout-ms', String(t.deliveryTimeoutMs),
        '--max-run-s', String(Math.max(5, (deadline - Date.now()) / 1000)),
        '--t0-epoch-ms', String(t0),
      ],
      { env, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    child = proc;
    let onLine!: () => void;
    let lineSeen = new Promise<void>((r) => (onLine = r));
    const read = (): PythonClientOutput => parsePythonClientOutput(output);
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
      output += d;
      onLine();
      lineSeen = new Promise<void>((r) => (onLine = r));
    });
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => (output += d));
    const exited = new Promise<void>((r) => proc.once('exit', () => r()));
    const settled1 = (async () => {
      while (!read().settled.some((s) => s.attempt === 1) && proc.exitCode === null && proc.signalCode === null) await Promise.race([lineSeen, exited]);
    })();

    // The seed's script: the partition (or call 1's end), then the app's retry once the SDK's resume was answered.
    await race(Promise.race([partitioned, settled1, exited]), deadline);
    let command = 'end';
    if (partitionedAt !== undefined) {
      await race(Promise.race([resumed, settled1, exited]), deadline);
      await sleep(t.retryCallDelayMs);
      command = 'retry';
    }
    step(`app: ${command}`);
    if (proc.stdin!.writable) proc.stdin!.end(`${command}\n`);
    await race(exited, deadline + 10_000);
    if (proc.exitCode === null && proc.signalCode === null) {
      step('python client still running at the run bound: killed');
      proc.kill('SIGKILL');
      await exited;
    }

    const got = read();
    const calls: CallRecord[] = got.summary?.calls ?? [{ attempt: 1, startedAtMs: 0, outcome: 'pending', progress: 0 }];
    const forks = got.summary?.forks ?? [];
    const droppedByDedup = got.summary?.droppedByDedup ?? null;
    const obs = server.observations;
    const wireResponses = new Set(tap.events.filter((e) => e.info.kind === 'response').map((e) => `${e.sessionId}\u0000${e.info.id}`));
    const produced = obs.runs.filter((r) => r.resultText !== undefined);
    const answered = calls.filter((c) => c.outcome === 'result').length;
    const r: ScenarioResult = {
      server: opts.server,
      client: opts.client,
      healthy,
      wallMs: Date.now() - t0,
      steps,
      calls,
      resultsProduced: produced.length,
      resultsReceived: answered,
      // Which produced result reached the app is not told by the Python script (only outcomes): a
      // result is lost when more were produced than answered, by request id on the wire.
      lostResults: produced.slice(answered).map((p) => ({
        requestId: p.requestId,
        life: p.life,
        onWire: wireResponses.has(`${p.sessionId}\u0000${p.requestId}`),
        droppedByDedup: false,
      })),
      droppedByDedup: droppedOnWire(droppedByDedup ?? [], tap.events).map(({ eventId, event: e }) => ({
        eventId,
        kind: e?.info.kind ?? 'unknown',
        ...(e?.info.id !== undefined ? { jsonrpcId: e.info.id } : {}),
      })),
      hung: calls.filter((c) => c.outcome === 'timeout' || c.outcome === 'pending').map((c) => ({ attempt: c.attempt, durationMs: c.durationMs ?? Date.now() - t0 - c.startedAtMs })),
      errors: calls.flatMap((c) => (c.error ? [c.error] : [])),
      forks,
      resumes: tap.exchanges.filter((x) => x.lastEventId !== undefined).map((x) => ({ lastEventId: x.lastEventId!, status: x.status, atMs: x.at - t0 })),
      replayedEventIds: tap.events.filter((e) => resumeExchanges.has(e.exchange)).map((e) => e.eventId),
      eventsBeforePartition,
      sequenceRegressions: sequenceRegressions(tap.events),
      sessions: {
        initialized: obs.created.filter((c) => c.by === 'initialize').length,
        rehydrated: obs.created.filter((c) => c.by === 'rehydrate').length,
        reaped: server.reapedCount(),
        reinitializedByClient: Math.max(0, obs.created.filter((c) => c.by === 'initialize').length - 1),
      },
      proxy: { connections: px.stats.connections, severed: px.stats.severed, refused: px.stats.refused, bytesDown: px.stats.bytesDown },
      wire: { exchanges: tap.exchanges.map((x) => ({ ...x, at: x.at - t0 })), events: tap.events.map((e) => ({ ...e, at: e.at - t0 })) },
    };
    return { r, output, droppedByDedup };
  } finally {
    if (healTimer) clearTimeout(healTimer);
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await fwd?.close().catch(() => {});
    await proxy?.close().catch(() => {});
    await front?.close().catch(() => {});
    await server?.close().catch(() => {});
  }
}

/** Waits for `p`, or until `deadline` (epoch ms), whichever is first. */
async function race(p: Promise<unknown>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p.then(() => undefined, () => undefined), new Promise<void>((r) => (timer = setTimeout(r, Math.max(0, deadline - Date.now()))))]);
  if (timer) clearTimeout(timer);
}
