import { parseEventId } from '@forkwatch/instrumentation/wire';
import { FaultProxy } from './fault-proxy.js';
import { startNaiveServer } from './naive-server.js';
import { startGuardedServer } from './guarded-server.js';
import { wireTap, type TappedEvent, type TappedExchange } from './wire-tap.js';
import { createAppClient, type AppClient } from './app-client.js';
import { describeError } from './describe-error.js';
import { createServerInstrumentation } from '@forkwatch/instrumentation/server';
import type { CallRecord, DemoServer, ErrorRecord, ScenarioResult, ScenarioStep, SeedScenarioOptions } from './types.js';

/** While waiting for the reap before healing, how often to look, ms. */
const HEAL_POLL_MS = 10;

/** Resolved timers of a scenario run (ms). */
export interface ScenarioTimers {
  reapAfterMs: number;
  reconnectDelayMs: number;
  partitionAfterEvents: number;
  partitionMs: number;
  steps: number;
  stepMs: number;
  requestTimeoutMs: number;
  retryCallDelayMs: number;
  maxRunMs: number;
  deliveryTimeoutMs: number;
}

/** The timers a run uses: explicit options, else defaults times `scale` (see SeedScenarioOptions). */
export function scenarioTimers(opts: SeedScenarioOptions): ScenarioTimers {
  const k = opts.scale ?? 1;
  const healthy = opts.healthy ?? false;
  return {
    reapAfterMs: opts.reapAfterMs ?? (healthy ? 1500 : 300) * k,
    reconnectDelayMs: opts.reconnectDelayMs ?? 450 * k,
    partitionAfterEvents: opts.partitionAfterEvents ?? 7,
    partitionMs: opts.partitionMs ?? (healthy ? 100 : 400) * k,
    steps: opts.steps ?? 5,
    stepMs: opts.stepMs ?? 30 * k,
    requestTimeoutMs: opts.requestTimeoutMs ?? 1500 * k,
    retryCallDelayMs: opts.retryCallDelayMs ?? 50 * k,
    maxRunMs: opts.maxRunMs ?? 8000 * k,
    deliveryTimeoutMs: opts.deliveryTimeoutMs ?? 250 * k,
  };
}

/**
 * Replays the seed with real parts and scaled timers: initialize, a slow tool call with a
 * progressToken, events e1..e7, a partition mid-stream (by a TCP proxy), the server's reaper
 * evicting the session, the client SDK's reconnect with `Last-Event-ID` after its backoff, and the
 * app calling the tool again when the first call has no result. Against a naive server the resume
 * is answered from a rehydrated session and the naive dedup eats the new call's events; against a
 * guarded server it is answered 404. Never throws for what the run shows (losses, hangs, forks are
 * results); throws only when the run itself cannot be set up. Wall time bounded by `maxRunMs`.
 */
export async function runSeedScenario(opts: SeedScenarioOptions): Promise<ScenarioResult> {
  const t = scenarioTimers(opts);
  const t0 = Date.now();
  const steps: ScenarioStep[] = [];
  const step = (what: string): void => {
    const s = { atMs: Date.now() - t0, what };
    steps.push(s);
    try {
      opts.onStep?.(s);
    } catch {
      // narration must not break the run
    }
  };
  const errors: ErrorRecord[] = [];
  const forks: ScenarioResult['forks'] = [];
  const deadline = t0 + t.maxRunMs;

  let server: DemoServer | undefined;
  let proxy: FaultProxy | undefined;
  let app: AppClient | undefined;
  let front: Awaited<ReturnType<NonNullable<SeedScenarioOptions['inFrontOfServer']>>> | undefined;
  const calls: CallRecord[] = [];
  const eventsBeforePartition: string[] = [];
  let partitionedAt: number | undefined;
  let onPartition!: () => void;
  const partitioned = new Promise<void>((r) => (onPartition = r));
  let onResume!: (x: TappedExchange) => void;
  const resumed = new Promise<TappedExchange>((r) => (onResume = r));
  let healTimer: NodeJS.Timeout | undefined;
  const resumeExchanges = new Set<number>();

  try {
    const serverInstrumentation = opts.tracerProviders?.server
      ? createServerInstrumentation({ tracerProvider: opts.tracerProviders.server, salt: opts.salt ?? '' })
      : undefined;
    server = opts.startServer
      ? await opts.startServer({ reapAfterMs: t.reapAfterMs, steps: t.steps, stepMs: t.stepMs })
      : opts.server === 'naive'
        ? await startNaiveServer({
            reapAfterMs: t.reapAfterMs,
            steps: t.steps,
            stepMs: t.stepMs,
            instrumentation: serverInstrumentation,
            onNote: step,
            ...(opts.sdk?.server ? { sdk: opts.sdk.server } : {}),
          })
        : await startGuardedServer({
            reapAfterMs: t.reapAfterMs,
            steps: t.steps,
            stepMs: t.stepMs,
            instrumentation: serverInstrumentation,
            onNote: step,
            ...(opts.sdk?.server ? { sdk: opts.sdk.server } : {}),
          });
    step(`${opts.server} MCP server on 127.0.0.1:${server.port} (reaps idle sessions after ${t.reapAfterMs} ms)`);
    const srv = server;
    const healthy = opts.healthy ?? false;
    if (opts.inFrontOfServer) {
      front = await opts.inFrontOfServer(`http://127.0.0.1:${server.port}`);
      step(`in front of the server: ${front.what} on 127.0.0.1:${front.port}`);
    }
    const px = await FaultProxy.start({ targetPort: front?.port ?? server.port, mode: 'hold' });
    proxy = px;
    step(`fault proxy on 127.0.0.1:${px.port}`);

    let idEvents = 0;
    const tap = wireTap(fetch, {
      onEvent: (e: TappedEvent) => {
        if (partitionedAt !== undefined) return;
        idEvents++;
        eventsBeforePartition.push(e.eventId);
        if (idEvents >= t.partitionAfterEvents) {
          px.partition();
          partitionedAt = Date.now();
          step(`partition after event ${e.eventId}: every connection cut`);
          // The seed's order is partition -> reap -> reconnect. Timers alone leave that to the
          // scheduler, so in the forking run the network stays down until the server has reaped
          // (a reconnect meanwhile is held by the proxy, as a retried TCP handshake would be).
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
        }
      },
      onExchange: (x, i) => {
        if (x.lastEventId === undefined) return;
        resumeExchanges.add(i);
        step(`resume: GET Last-Event-ID ${x.lastEventId} answered ${x.status}${x.answeredSessionId ? ' under the same session id' : ''}`);
        onResume(x);
      },
    });

    app = await createAppClient(opts.client, {
      ...(opts.tool ? { tool: opts.tool } : {}),
      url: px.url('/mcp'),
      fetch: tap.fetch,
      reconnectDelayMs: t.reconnectDelayMs,
      requestTimeoutMs: t.requestTimeoutMs,
      tracerProvider: opts.tracerProviders?.client,
      salt: opts.salt,
      deliveryTimeoutMs: t.deliveryTimeoutMs,
      ...(opts.sdk?.client ? { sdk: opts.sdk.client } : {}),
      onTransportError: (e) => errors.push(e),
      onFork: (e) => {
        forks.push({ kind: e.kind ?? 'unknown', message: e.message, atMs: Date.now() - t0 });
        step(`client guard: SessionForkError ${e.kind}: ${e.message}`);
      },
    });
    step(`${opts.client} client initialized`);

    const call = (attempt: number): Promise<void> => {
      const rec: CallRecord = { attempt, startedAtMs: Date.now() - t0, outcome: 'pending', progress: 0 };
      calls.push(rec);
      step(`call ${attempt}: tools/call slow_report with a progressToken`);
      return app!.callTool(`attempt ${attempt}`, () => rec.progress++).then(
        (text) => {
          rec.outcome = 'result';
          rec.resultText = text;
          settle(rec);
          step(`call ${attempt}: result received after ${rec.durationMs} ms`);
        },
        (err: unknown) => {
          rec.error = { source: 'call', ...describeError(err) };
          // The SDK's own request timeout: 1.x throws McpError -32001, 2.x an SdkError with code 'REQUEST_TIMEOUT'.
          const timedOut = (rec.error.code === -32001 && rec.error.name === 'McpError') || (err as { code?: unknown }).code === 'REQUEST_TIMEOUT';
          rec.outcome = timedOut ? 'timeout' : 'error';
          errors.push(rec.error);
          settle(rec);
          step(`call ${attempt}: ${rec.outcome} after ${rec.durationMs} ms (${rec.error.name}${rec.error.kind ? ` ${rec.error.kind}` : ''}: ${rec.error.message})`);
        },
      );
    };
    const settle = (rec: CallRecord): void => {
      rec.settledAtMs = Date.now() - t0;
      rec.durationMs = rec.settledAtMs - rec.startedAtMs;
    };

    const pending: Array<Promise<void>> = [call(1)];
    const first = calls[0]!;
    await race(partitioned, deadline);
    if (partitionedAt !== undefined) {
      // The app's retry: once the SDK's reconnect was answered (or the first call failed), and
      // only when the first call still has no result.
      await race(Promise.race([resumed, pending[0]!]), deadline);
      await sleep(t.retryCallDelayMs);
      if (first.outcome === 'pending' || first.outcome === 'error') pending.push(call(2));
    }
    await race(Promise.allSettled(pending), deadline);
    for (const c of calls) if (c.outcome === 'pending') step(`call ${c.attempt}: still pending at the run's bound`);
    // What the client sends as it gives up (the SDK's `notifications/cancelled` on a timeout) is on
    // the wire before the app goes on: a live app does not close its client within the same tick.
    // One macrotask lets the SDK start that POST; then it is waited for, bounded.
    await sleep(0);
    const drainUntil = Math.min(deadline, Date.now() + 2000);
    while (tap.inflight > 0 && Date.now() < drainUntil) await sleep(10);

    // Results: what the server produced against what reached the app.
    const obs = server.observations;
    const received = new Set(calls.map((c) => c.resultText).filter((x): x is string => x !== undefined));
    const produced = obs.runs.filter((r) => r.resultText !== undefined);
    const wireResponses = new Set(tap.events.filter((e) => e.info.kind === 'response').map((e) => `${e.sessionId}\u0000${e.info.id}`));
    const dropped = app.droppedByDedup();
    const lostResults = produced
      .filter((r) => !received.has(r.resultText!))
      .map((r) => ({
        requestId: r.requestId,
        life: r.life,
        onWire: wireResponses.has(`${r.sessionId}\u0000${r.requestId}`),
        droppedByDedup: dropped.some((d) => d.kind === 'response' && d.jsonrpcId === r.requestId && d.sessionId === r.sessionId),
      }));
    const resumes = tap.exchanges
      .filter((x) => x.lastEventId !== undefined)
      .map((x) => ({ lastEventId: x.lastEventId!, status: x.status, atMs: x.at - t0 }));
    const replayedEventIds = tap.events.filter((e) => resumeExchanges.has(e.exchange)).map((e) => e.eventId);

    return {
      server: opts.server,
      client: opts.client,
      healthy: opts.healthy ?? false,
      wallMs: Date.now() - t0,
      steps,
      calls,
      resultsProduced: produced.length,
      resultsReceived: received.size,
      lostResults,
      droppedByDedup: dropped.map((d) => ({ eventId: d.eventId, kind: d.kind, jsonrpcId: d.jsonrpcId })),
      hung: calls
        .filter((c) => c.outcome === 'timeout' || c.outcome === 'pending')
        .map((c) => ({ attempt: c.attempt, durationMs: c.durationMs ?? Date.now() - t0 - c.startedAtMs })),
      errors,
      forks,
      resumes,
      replayedEventIds,
      eventsBeforePartition,
      sequenceRegressions: sequenceRegressions(tap.events),
      sessions: {
        initialized: obs.created.filter((c) => c.by === 'initialize').length,
        rehydrated: obs.created.filter((c) => c.by === 'rehydrate').length,
        reaped: server.reapedCount(),
        reinitializedByClient: Math.max(0, obs.created.filter((c) => c.by === 'initialize').length - 1),
      },
      rehydrations: obs.created
        .filter((c) => c.by === 'rehydrate')
        .map((c) => {
          const reaped = obs.reaped.find((r) => r.sessionId === c.sessionId && r.life === c.life);
          return reaped === undefined ? { life: c.life, method: c.method } : { life: c.life, method: c.method, events: reaped.eventsEvicted };
        }),
      proxy: { connections: px.stats.connections, severed: px.stats.severed, refused: px.stats.refused, bytesDown: px.stats.bytesDown },
      wire: { exchanges: tap.exchanges.map((x) => ({ ...x, at: x.at - t0 })), events: tap.events.map((e) => ({ ...e, at: e.at - t0 })) },
    };
  } finally {
    if (healTimer) clearTimeout(healTimer);
    await app?.close().catch(() => {});
    await proxy?.close().catch(() => {});
    await front?.close().catch(() => {});
    await server?.close().catch(() => {});
  }
}

/** Sequence numbers (from counter or guarded ids) that went backwards on one session id. */
export function sequenceRegressions(events: TappedEvent[]): Array<{ fromEventId: string; toEventId: string }> {
  const last = new Map<string, { seq: number; id: string }>();
  const out: Array<{ fromEventId: string; toEventId: string }> = [];
  for (const e of events) {
    const p = parseEventId(e.eventId);
    if (p.seq === undefined) continue;
    const key = e.sessionId ?? '';
    const prev = last.get(key);
    if (prev && p.seq < prev.seq) out.push({ fromEventId: prev.id, toEventId: e.eventId });
    if (!prev || p.seq > prev.seq) last.set(key, { seq: p.seq, id: e.eventId });
  }
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Waits for `p`, or until `deadline` (epoch ms), whichever is first. */
async function race<T>(p: Promise<T>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    p.then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((r) => (timer = setTimeout(r, Math.max(0, deadline - Date.now())))),
  ]);
  if (timer) clearTimeout(timer);
}
