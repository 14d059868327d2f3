import { context } from '@opentelemetry/api';
import { ATTR_MCP_PROTOCOL_VERSION, ATTR_NETWORK_PROTOCOL_NAME, ATTR_NETWORK_PROTOCOL_VERSION, ATTR_NETWORK_TRANSPORT, HEADER_PROTOCOL_VERSION } from '../semconv.js';
import { headerOf, headersOfExtra, serverParent } from './meta-context.js';
import { OperationRecorder, resultOutcome, serverJsonRpcErrorOutcome, type ConventionalOptions, type Operation } from './operation-recorder.js';
import { SessionDurations } from './session-durations.js';

/** Requests in flight per transport; past it the oldest is ended as `_OTHER` (a host that never answers must not pin spans). */
export const MAX_OPEN_OPERATIONS_PER_TRANSPORT = 4096;

interface ObservedTransport {
  readonly sessionId?: string | undefined;
}

/** What the server knows of the HTTP request a message may have come in on. */
interface HttpPeer {
  address?: string | undefined;
  port?: number | undefined;
  /** `1.1`, `2`, ... (`network.protocol.version`). */
  version: string;
}

/** What a Node `IncomingMessage` gives for {@link HttpPeer}. */
interface PeerRequest {
  method?: string | undefined;
  httpVersion?: string | undefined;
  socket?: { remoteAddress?: string | undefined; remotePort?: number | undefined } | null | undefined;
}

/** `network.protocol.version` of Node's `httpVersion`: `2.0` is HTTP/2, which the conventions write `2`. */
const protocolVersion = (v: string): string => (v === '2.0' ? '2' : v);

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
  /** POSTs of each transport being handled: where its messages can have come from. */
  private readonly posts = new WeakMap<object, HttpPeer[]>();
  private readonly sessions: SessionDurations;
  /** The `initialize` of each transport, until it is answered (its result names the negotiated version). */
  private readonly initializing = new WeakMap<object, string>();

  constructor(opts: ConventionalOptions) {
    this.recorder = new OperationRecorder('server', opts);
    this.sessions = new SessionDurations('server', opts);
  }

  /**
   * The transport's `handleRequest(req)` starts: a POST's peer and HTTP version are what its
   * messages' spans can record. Returns what to call when the request has been handled.
   */
  httpRequest(transport: object, req: PeerRequest): (() => void) | undefined {
    try {
      if (req.method !== 'POST') return undefined;
      const peer: HttpPeer = { address: req.socket?.remoteAddress, port: req.socket?.remotePort, version: protocolVersion(String(req.httpVersion ?? '1.1')) };
      let list = this.posts.get(transport);
      if (list === undefined) this.posts.set(transport, (list = []));
      list.push(peer);
      return () => {
        const i = list!.indexOf(peer);
        if (i >= 0) list!.splice(i, 1);
      };
    } catch {
      return undefined;
    }
  }

  /**
   * The peer of a message arriving now: the onmessage extra does not say which HTTP request
   * carried it, so each field is recorded only when every POST in flight on the transport agrees
   * (the port: only when one POST is in flight).
   */
  private peerOf(transport: object): { clientAddress?: string; clientPort?: number; networkProtocolVersion?: string } {
    const list = this.posts.get(transport);
    if (list === undefined || list.length === 0) return {};
    const [first] = list as [HttpPeer];
    const out: { clientAddress?: string; clientPort?: number; networkProtocolVersion?: string } = {};
    if (first.address !== undefined && list.every((p) => p.address === first.address)) out.clientAddress = first.address;
    if (list.length === 1 && first.port !== undefined && out.clientAddress !== undefined) out.clientPort = first.port;
    if (list.every((p) => p.version === first.version)) out.networkProtocolVersion = first.version;
    return out;
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
        const peer = this.peerOf(transport);
        op = this.recorder.start(
          { method: m.method, id: m.id, params: m.params },
          { sessionId: transport.sessionId ?? headerOf(headers, 'mcp-session-id'), protocolVersion: typeof pv === 'string' ? pv : undefined, parent, links, ...peer },
        );
        if (op !== undefined) this.track(transport, String(m.id), op);
        if (m.method === 'initialize') {
          this.initializing.set(transport, String(m.id));
          this.sessions.start(transport, {
            [ATTR_NETWORK_TRANSPORT]: 'tcp',
            [ATTR_NETWORK_PROTOCOL_NAME]: 'http',
            ...(peer.networkProtocolVersion !== undefined ? { [ATTR_NETWORK_PROTOCOL_VERSION]: peer.networkProtocolVersion } : {}),
            ...(typeof pv === 'string' ? { [ATTR_MCP_PROTOCOL_VERSION]: pv.slice(0, 64) } : {}),
          });
        }
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
      // The answer to `initialize` names the version both sides settled on.
      if (this.initializing.get(transport) === key) {
        this.initializing.delete(transport);
        const negotiated = (m.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
        if (typeof negotiated === 'string') this.sessions.set(transport, ATTR_MCP_PROTOCOL_VERSION, negotiated.slice(0, 64));
        const init = ops?.get(key);
        if (init !== undefined && typeof negotiated === 'string') this.recorder.setProtocolVersion(init, negotiated);
      }
      const op = ops?.get(key);
      if (op === undefined) return;
      ops!.delete(key);
      this.recorder.end(op, 'error' in m && m.error !== undefined ? serverJsonRpcErrorOutcome(m.error) : resultOutcome(m.result));
    } catch {
      // Never into the host's send.
    }
  }

  /** The transport closed: what it never answered ends now, as `transport_closed`. */
  closed(transport: object): void {
    // A session only if the transport got an id (a stateless transport's initialize made none).
    try {
      this.sessions.end(transport, (transport as ObservedTransport).sessionId !== undefined);
    } catch {
      // Never into the host's close.
    }
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
