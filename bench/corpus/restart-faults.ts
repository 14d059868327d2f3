import type { TracerProvider } from '@opentelemetry/api';
import { createServerInstrumentation } from '@forkwatch/instrumentation/server';
import { startGuardedServer } from '../../src/demo/guarded-server.js';
import { startNaiveServer } from '../../src/demo/naive-server.js';
import type { ServerSdkKit } from '../../src/demo/sdk-kit.js';
import type { DemoServer } from '../../src/demo/types.js';
import type { TappedExchange } from '../../src/demo/wire-tap.js';
import type { CorpusCell, CorpusFault } from './corpus-cell.js';

/**
 * Faults of a server that loses the client's place (issue 24):
 * - `reject-409`: the seed's healthy cut against the guarded server with a two-event log, so the
 *   resume's cursor is evicted by then and the resume is answered 409 (test/conformance/ts-pairs.ts);
 * - `server-restart`: the server restarted mid-call (restart-scenario.ts), the resume meets a
 *   server that never knew the session: 404/400, or a session minted by a rehydrating server;
 * - `refused-restart`: the same, but the address refuses connections while the server is down
 *   until the client's reconnects are spent: no resume reaches the new server.
 */
export const RESTART_FAULTS: readonly CorpusFault[] = ['reject-409', 'server-restart', 'refused-restart'];

/** The event log size of `reject-409`'s server: smaller than the events sent during the cut. */
export const REJECT_409_MAX_EVENTS = 2;

/** Why a restart fault is not played on a cell, or undefined. */
export function restartNotPlayable(cell: CorpusCell): string | undefined {
  if (cell.fault === 'reject-409') {
    if (cell.server !== 'guarded') return 'only the guarded demo server bounds its event log (maxEventsPerSession): the others keep every event, so no cursor is evicted';
    return undefined;
  }
  if ((cell.fault === 'server-restart' || cell.fault === 'refused-restart') && cell.client === 'guarded') return 'the restart session drives the stock SDK client only';
  return undefined;
}

/** `reject-409`'s server: the guarded demo server with a two-event log, instrumented in-process when given a provider. */
export function reject409Server(
  serverProvider: TracerProvider | undefined,
  salt: string,
  sdk: ServerSdkKit | undefined,
): (t: { reapAfterMs: number; steps: number; stepMs: number }) => Promise<DemoServer> {
  return async (t) =>
    startGuardedServer({
      ...t,
      maxEventsPerSession: REJECT_409_MAX_EVENTS,
      ...(serverProvider ? { instrumentation: createServerInstrumentation({ tracerProvider: serverProvider, salt }) } : {}),
      ...(sdk ? { sdk } : {}),
    });
}

/**
 * A demo server incarnation for `server-restart`: each call starts a fresh server with fresh
 * instrumentation state (a restarted process keeps nothing), exporting to the same provider.
 */
export function restartDemoServer(
  kind: 'naive' | 'guarded',
  serverProvider: TracerProvider | undefined,
  salt: string,
  sdk: ServerSdkKit | undefined,
  t: { reapAfterMs: number; steps: number; stepMs: number },
): () => Promise<DemoServer> {
  return async () => {
    const o = {
      ...t,
      ...(serverProvider ? { instrumentation: createServerInstrumentation({ tracerProvider: serverProvider, salt }) } : {}),
      ...(sdk ? { sdk } : {}),
    };
    return kind === 'naive' ? startNaiveServer(o) : startGuardedServer(o);
  };
}

/** What the client's resumes (requests carrying `Last-Event-ID`) were answered, as the wire shows: e.g. `409`, `404,404`. */
export function resumeStatuses(exchanges: readonly Pick<TappedExchange, 'lastEventId' | 'status'>[]): string {
  return exchanges.filter((x) => x.lastEventId !== undefined).map((x) => String(x.status)).join(',') || 'none';
}
