import { context, type Attributes } from '@opentelemetry/api';
import { ATTR_MCP_PROTOCOL_VERSION, ATTR_NETWORK_PROTOCOL_NAME, ATTR_NETWORK_TRANSPORT, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '../semconv.js';
import { withTraceMeta } from './meta-context.js';
import { jsonRpcErrorOutcome, OperationRecorder, resultOutcome, type ConventionalOptions, type OperationOutcome } from './operation-recorder.js';
import { SessionDurations } from './session-durations.js';

/** What the hook reads from the SDK's Client (1.x `Client`, 2.x `@modelcontextprotocol/client`). */
interface HookableClient {
  request: (...args: any[]) => Promise<any>;
}

/** What it reads from the SDK's Streamable HTTP client transport. */
interface HookableTransport {
  readonly sessionId?: string | undefined;
  close?: (...args: any[]) => Promise<void>;
  terminateSession?: (...args: any[]) => Promise<void>;
}

const HOOKED = Symbol.for('forkwatch.conventional.client');

/**
 * Client side of the MCP conventions (option `mcpSemconv`): a CLIENT span
 * `{mcp.method.name} {target}` and a `mcp.client.operation.duration` point per request the client
 * sends, from `client.request()` until it settles; the span's context goes into `params._meta`
 * (and is the active context while the SDK sends, so the HTTP `traceparent` and forkwatch's own
 * `request.sent` hang under it).
 */
export class ClientOperations {
  private readonly recorder: OperationRecorder;
  private readonly sessions: SessionDurations;

  constructor(opts: ConventionalOptions) {
    this.recorder = new OperationRecorder('client', opts);
    this.sessions = new SessionDurations('client', opts);
  }

  get failures(): number {
    return this.recorder.failures;
  }

  /**
   * Wraps `client.request` on the instance (idempotent). Installed after forkwatch's own request
   * hook, so it runs outside it and forkwatch's spans see the operation span as active.
   */
  hookClient(client: HookableClient, transport: HookableTransport): void {
    const c = client as HookableClient & { [HOOKED]?: true };
    if (c[HOOKED]) return;
    Object.defineProperty(c, HOOKED, { value: true });
    const original = client.request;
    const recorder = this.recorder;
    const sessions = this.sessions;
    this.hookClose(client, transport);
    client.request = function (this: unknown, request: any) {
      const method: unknown = request?.method;
      // eslint-disable-next-line prefer-rest-params
      const args = Array.prototype.slice.call(arguments) as unknown[];
      if (typeof method !== 'string') return original.apply(this, args);
      const next = (client as { _requestMessageId?: unknown })._requestMessageId;
      const url = (transport as { _url?: unknown })._url;
      const server = url instanceof URL ? { serverAddress: url.hostname, serverPort: portOf(url) } : {};
      const initialize = method === 'initialize';
      let pv = stringOrUndefined((transport as { protocolVersion?: unknown }).protocolVersion);
      if (initialize) {
        try {
          const attrs: Attributes = { [ATTR_NETWORK_TRANSPORT]: 'tcp', [ATTR_NETWORK_PROTOCOL_NAME]: 'http' };
          if (server.serverAddress !== undefined) Object.assign(attrs, { [ATTR_SERVER_ADDRESS]: server.serverAddress, [ATTR_SERVER_PORT]: server.serverPort });
          sessions.start(client, attrs);
          // The transport learns the version only from initialize's answer: until then, the one asked for.
          pv ??= stringOrUndefined(request.params?.protocolVersion);
        } catch {
          // Costs the session point, never the request.
        }
      }
      const op = recorder.start(
        { method, id: typeof next === 'number' ? next : undefined, params: request.params },
        {
          sessionId: transport.sessionId,
          protocolVersion: pv,
          ...server,
          parent: context.active(),
        },
      );
      if (op === undefined) return original.apply(this, args);
      try {
        args[0] = withTraceMeta(request, op.ctx);
      } catch {
        // A propagator that throws costs the _meta context, not the request.
      }
      let result: Promise<unknown>;
      try {
        result = context.with(op.ctx, () => original.apply(this, args));
      } catch (err) {
        recorder.end(op, errorOutcome(err));
        throw err;
      }
      if (result !== null && typeof (result as { then?: unknown })?.then === 'function') {
        result.then(
          (r) => {
            if (initialize) {
              // The version the server answered with is the session's.
              const negotiated = stringOrUndefined((r as { protocolVersion?: unknown } | null)?.protocolVersion);
              if (negotiated !== undefined) {
                recorder.setProtocolVersion(op, negotiated);
                sessions.set(client, ATTR_MCP_PROTOCOL_VERSION, negotiated.slice(0, 64));
              }
              // No session id given: a stateless server, no session to time.
              if (transport.sessionId === undefined) sessions.end(client, false);
            }
            recorder.end(op, resultOutcome(r));
          },
          (err: unknown) => {
            if (initialize) sessions.end(client, false);
            recorder.end(op, errorOutcome(err));
          },
        );
      } else recorder.end(op, {});
      return result;
    };
  }

  /**
   * The client's session ends when its transport is closed (`client.close()` closes it) or it
   * terminates the session: records `mcp.client.session.duration` once, if `initialize` was seen
   * and answered with a session id.
   */
  private hookClose(client: object, transport: HookableTransport): void {
    const sessions = this.sessions;
    // close(): the client goes away; terminateSession(): it ends the session (DELETE) first.
    for (const name of ['close', 'terminateSession'] as const) {
      const original = transport[name];
      if (typeof original !== 'function') continue;
      transport[name] = function (this: unknown) {
        try {
          // Before the original runs, so terminateSession has not cleared the id yet; no id yet
          // (closed while initialize was pending): no session, no point.
          sessions.end(client, transport.sessionId !== undefined);
        } catch {
          // Never into the host's close.
        }
        // eslint-disable-next-line prefer-rest-params
        return original.apply(this, arguments as unknown as unknown[]);
      };
    }
  }
}

/** How a rejected request ended: an SDK error's JSON-RPC code, else the error's class. */
export function errorOutcome(err: unknown): OperationOutcome {
  const code = (err as { code?: unknown } | null)?.code;
  // 1.x McpError / 2.x ProtocolError carry the JSON-RPC code; SdkError a string code (e.g. REQUEST_TIMEOUT).
  if (typeof code === 'number') return jsonRpcErrorOutcome({ code, message: wireMessage(err as Error, code) });
  if (typeof code === 'string') return { errorType: code, ...(err instanceof Error ? { message: err.message } : {}) };
  if (err instanceof Error) return { errorType: err.name && err.name !== 'Error' ? err.name : '_OTHER', message: err.message };
  return { errorType: '_OTHER' };
}

/**
 * The JSONRPCError.message the server sent (the conventions' status description): SDK 1.x's
 * McpError prepends `MCP error {code}: ` to it, and a 1.x server's own McpError message already
 * carries that prefix, so the description read `MCP error -32602: MCP error -32602: ...`. One
 * prefix (the client SDK's) is taken off; 2.x's ProtocolError keeps the message as sent.
 */
function wireMessage(err: Error, code: number): string {
  const message = typeof err.message === 'string' ? err.message : '';
  const prefix = `MCP error ${code}: `;
  return err.name !== 'ProtocolError' && message.startsWith(prefix) ? message.slice(prefix.length) : message;
}

const stringOrUndefined = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}
