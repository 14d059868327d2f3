import { context } from '@opentelemetry/api';
import { HEADER_PROTOCOL_VERSION } from '../semconv.js';
import { headerOf, headersOfExtra, serverParent } from './meta-context.js';
import { jsonRpcErrorOutcome, OperationRecorder, resultOutcome, type ConventionalOptions, type Operation } from './operation-recorder.js';

/** Requests in flight per transport; past it the oldest is ended as `_OTHER` (a host that never answers must not pin spans). */
export const MAX_OPEN_OPERATIONS_PER_TRANSPORT = 4096;

interface ObservedTransport {
  readonly sessionId?: string | undefined;
}

/**
 * Server side of the MCP conventions (option `mcpSemconv`): a SERVER span
 * `{mcp.method.name} {target}` and a `mcp.server.operation.duration` point per JSON-RPC request a
 * transport receives, from its arrival until the transport sends its response. The span's parent
 * is the context the client put in `params._meta` (linked to the HTTP request's own), or the HTTP
 * request's; the host's handler runs with the span active, so spans the tool makes are its children.
 * Fed by three hooks of the server instrumentation: {@link received}, {@link sent}, {@link closed}.
 */
export class ServerOperations {
  private readonly recorder: OperationRecorder;
  private readonly open = new WeakMap<object, Map<string, Operation>>();

  constructor(opts: ConventionalOptions) {
    this.recorder = new OperationRecorder('server', opts);
  }

  get failures(): number {
    return this.recorder.failures;
  }

  /**
   * A message reached the transport's `onmessage`: a request starts its span, and `deliver`
   * (the host's handler) runs with it active. Whatever happens here, `deliver` runs exactly once.
   */
  received<R>(transport: ObservedTransport, message: unknown, extra: unknown, deliver: () => R): R {
    let op: Operation | undefined;
    try {
      const m = message as { method?: unknown; id?: unknown; params?: unknown } | null;
      if (m !== null && typeof m === 'object' && typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number')) {
        const headers = headersOfExtra(extra);
        const { parent, links } = serverParent(context.active(), m.params, headers);
        const pv = m.method === 'initialize' ? (m.params as { protocolVersion?: unknown } | undefined)?.protocolVersion : headerOf(headers, HEADER_PROTOCOL_VERSION);
        op = this.recorder.start(
          { method: m.method, id: m.id, params: m.params },
          { sessionId: transport.sessionId ?? headerOf(headers, 'mcp-session-id'), protocolVersion: typeof pv === 'string' ? pv : undefined, parent, links },
        );
        if (op !== undefined) this.track(transport, String(m.id), op);
      }
    } catch {
      op = undefined;
    }
    return op === undefined ? deliver() : context.with(op.ctx, deliver);
  }

  /** The transport sends `message`: a response (result or error) ends its request's span. */
  sent(transport: object, message: unknown): void {
    try {
      const m = message as { id?: unknown; result?: unknown; error?: unknown; method?: unknown } | null;
      if (m === null || typeof m !== 'object' || m.method !== undefined) return;
      if (typeof m.id !== 'string' && typeof m.id !== 'number') return;
      const ops = this.open.get(transport);
      const key = String(m.id);
      const op = ops?.get(key);
      if (op === undefined) return;
      ops!.delete(key);
      this.recorder.end(op, 'error' in m && m.error !== undefined ? jsonRpcErrorOutcome(m.error) : resultOutcome(m.result));
    } catch {
      // Never into the host's send.
    }
  }

  /** The transport closed: what it never answered ends now, as `transport_closed`. */
  closed(transport: object): void {
    const ops = this.open.get(transport);
    if (ops === undefined) return;
    this.open.delete(transport);
    for (const op of ops.values()) this.recorder.end(op, { errorType: 'transport_closed', message: 'transport closed before the response was sent' });
  }

  /**
   * For transports no server instrumentation observes (the per-request ones of SDK 2.x
   * `createMcpHandler`, through `observeStatelessServers`): wraps the `onmessage` the server
   * assigned when it connected, `send` and `onclose`, feeding the three hooks above.
   */
  hookTransport(transport: { sessionId?: string | undefined; onmessage?: unknown; onclose?: unknown; send: (message: unknown, options?: unknown) => Promise<void> }): void {
    const self = this;
    const onmessage = transport.onmessage;
    if (typeof onmessage === 'function') {
      transport.onmessage = function (this: unknown, message: unknown, extra: unknown) {
        // eslint-disable-next-line prefer-rest-params
        return self.received(transport, message, extra, () => onmessage.apply(this, arguments as unknown as unknown[]));
      };
    }
    const send = transport.send;
    transport.send = function (this: unknown, message: unknown, options?: unknown) {
      self.sent(transport, message);
      // eslint-disable-next-line prefer-rest-params
      return send.apply(this, arguments as unknown as [unknown, unknown?]);
    };
    const onclose = transport.onclose;
    transport.onclose = function (this: unknown) {
      self.closed(transport);
      // eslint-disable-next-line prefer-rest-params
      return typeof onclose === 'function' ? onclose.apply(this, arguments as unknown as unknown[]) : undefined;
    };
  }

  private track(transport: object, id: string, op: Operation): void {
    let ops = this.open.get(transport);
    if (ops === undefined) this.open.set(transport, (ops = new Map()));
    const prior = ops.get(id);
    // A reused id: the older request can no longer be told apart from the new one.
    if (prior !== undefined) this.recorder.end(prior, { errorType: '_OTHER', message: 'request id reused before the response' });
    else if (ops.size >= MAX_OPEN_OPERATIONS_PER_TRANSPORT) {
      const [oldestId, oldest] = ops.entries().next().value as [string, Operation];
      ops.delete(oldestId);
      this.recorder.end(oldest, { errorType: '_OTHER', message: 'too many requests in flight on this transport' });
    }
    ops.set(id, op);
  }
}
