import type { ServerResponse } from 'node:http';
import { context, propagation, type Context, type DiagLogger } from '@opentelemetry/api';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { argsDigest } from '../common/args-digest.js';
import type { HandledCall, HandledReporter } from '../common/handled-reporter.js';

/** Requests watched at once per stateless transport; past it new ones are not watched. */
export const MAX_STATELESS_CALLS_PER_TRANSPORT = 1024;

/** What one SDK 1.x stateless transport (`sessionIdGenerator: undefined`) is handling. */
export interface StatelessTransportCalls {
  /** Requests read and not yet answered, by JSON-RPC id. */
  calls: Map<string, HandledCall>;
}

/**
 * Whether an SDK 1.x transport runs stateless (`sessionIdGenerator: undefined`): no session id,
 * so no session key, and its requests are reported as the 2026-07-28 stateless ones are. Read from
 * the web-standard transport the node one wraps; any unknown shape answers false.
 */
export function isStatelessTransport(transport: StreamableHTTPServerTransport): boolean {
  try {
    const inner = (transport as unknown as { _webStandardTransport?: unknown })._webStandardTransport;
    const holder = (inner !== null && typeof inner === 'object' ? inner : transport) as Record<string, unknown>;
    return 'sessionIdGenerator' in holder && holder.sessionIdGenerator === undefined;
  } catch {
    return false;
  }
}

const headerGetter = {
  keys: (c: Record<string, unknown>) => Object.keys(c),
  get: (c: Record<string, unknown>, k: string) => {
    const v = c[k];
    return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? (v[0] as string) : undefined;
  },
};

/**
 * `forkwatch.request.handled` for SDK 1.x stateless transports, observed where the 1.x
 * instrumentation sits (the transport, not the handler): a request from when it is read
 * (`onmessage`) until its answer is sent; its response stream closed first when the HTTP response
 * closed before it finished, or the transport closed, with the request unanswered; messages the
 * server still sent for it after that are counted. The handler outcome is the answer's
 * (`completed`, `error`); a request the transport closed on is reported without one (SDK 1.x
 * aborts the handler's signal and drops what it sends after a close, unseen here). Never throws.
 */
export class StatelessCalls {
  constructor(
    private readonly reporter: HandledReporter,
    private readonly log: DiagLogger,
  ) {}

  /** A request message was read on the transport (onmessage). */
  onRequest(st: StatelessTransportCalls, message: unknown, extra: unknown): void {
    try {
      const m = message as { id?: unknown; method?: unknown; params?: unknown };
      if (typeof m.method !== 'string' || m.id === undefined || m.id === null || m.method === 'initialize') return;
      if (st.calls.size >= MAX_STATELESS_CALLS_PER_TRANSPORT) return;
      const params = (m.params !== null && typeof m.params === 'object' ? m.params : {}) as Record<string, unknown>;
      const meta = params._meta !== null && typeof params._meta === 'object' ? (params._meta as Record<string, unknown>) : undefined;
      const headers = (extra as { requestInfo?: { headers?: Record<string, unknown> } } | undefined)?.requestInfo?.headers;
      // The context the client wrote into params._meta wins over the HTTP header's (SEP-414).
      const carrier = meta !== undefined && typeof meta.traceparent === 'string' ? meta : headers;
      let parent: Context = context.active();
      if (carrier !== undefined) parent = propagation.extract(parent, carrier, headerGetter);
      const id = String(m.id);
      st.calls.set(id, {
        method: m.method,
        id,
        tool: m.method === 'tools/call' && typeof params.name === 'string' ? params.name : undefined,
        digest: argsDigest(params),
        startMs: Date.now(),
        afterClose: 0,
        parent,
      });
    } catch (err) {
      this.log.debug('stateless request hook failed', err);
    }
  }

  /** Watches the HTTP response the transport answers on: closed before it finished, its requests lost their stream. */
  watchResponse(st: StatelessTransportCalls, res: ServerResponse): void {
    res.once('close', () => {
      if (res.writableFinished) return;
      const now = Date.now();
      for (const c of st.calls.values()) c.closedAtMs ??= now;
    });
  }

  /** A message leaving through the transport (send). */
  onSend(st: StatelessTransportCalls, message: unknown, options: unknown): void {
    if (st.calls.size === 0) return;
    try {
      const m = message as { id?: unknown; method?: unknown; result?: unknown; error?: unknown };
      const isAnswer = m.method === undefined && (m.result !== undefined || m.error !== undefined);
      const related = isAnswer ? m.id : (options as { relatedRequestId?: unknown } | undefined)?.relatedRequestId;
      if (related === undefined || related === null) return;
      const c = st.calls.get(String(related));
      if (c === undefined) return;
      if (c.closedAtMs !== undefined) c.afterClose++;
      if (!isAnswer) return;
      st.calls.delete(c.id);
      const toolError = (m.result as { isError?: unknown } | undefined)?.isError === true;
      this.reporter.report(c, m.error !== undefined || toolError ? 'error' : 'completed');
    } catch (err) {
      this.log.debug('stateless send hook failed', err);
    }
  }

  /** The transport closed: what it had not answered lost its stream for good. */
  onClose(st: StatelessTransportCalls): void {
    if (st.calls.size === 0) return;
    const now = Date.now();
    for (const c of st.calls.values()) {
      c.closedAtMs ??= now;
      this.reporter.report(c, undefined, now);
    }
    st.calls.clear();
  }
}
