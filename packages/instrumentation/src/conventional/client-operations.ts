import { context } from '@opentelemetry/api';
import { withTraceMeta } from './meta-context.js';
import { jsonRpcErrorOutcome, OperationRecorder, resultOutcome, type ConventionalOptions, type OperationOutcome } from './operation-recorder.js';

/** What the hook reads from the SDK's Client (1.x `Client`, 2.x `@modelcontextprotocol/client`). */
interface HookableClient {
  request: (...args: any[]) => Promise<any>;
}

/** What it reads from the SDK's Streamable HTTP client transport. */
interface HookableTransport {
  readonly sessionId?: string | undefined;
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

  constructor(opts: ConventionalOptions) {
    this.recorder = new OperationRecorder('client', opts);
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
    client.request = function (this: unknown, request: any) {
      const method: unknown = request?.method;
      // eslint-disable-next-line prefer-rest-params
      const args = Array.prototype.slice.call(arguments) as unknown[];
      if (typeof method !== 'string') return original.apply(this, args);
      const next = (client as { _requestMessageId?: unknown })._requestMessageId;
      const url = (transport as { _url?: unknown })._url;
      const op = recorder.start(
        { method, id: typeof next === 'number' ? next : undefined, params: request.params },
        {
          sessionId: transport.sessionId,
          protocolVersion: stringOrUndefined((transport as { protocolVersion?: unknown }).protocolVersion),
          ...(url instanceof URL ? { serverAddress: url.hostname, serverPort: portOf(url) } : {}),
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
          (r) => recorder.end(op, resultOutcome(r)),
          (err: unknown) => recorder.end(op, errorOutcome(err)),
        );
      } else recorder.end(op, {});
      return result;
    };
  }
}

/** How a rejected request ended: an SDK error's JSON-RPC code, else the error's class. */
function errorOutcome(err: unknown): OperationOutcome {
  const code = (err as { code?: unknown } | null)?.code;
  // 1.x McpError / 2.x ProtocolError carry the JSON-RPC code; SdkError a string code (e.g. REQUEST_TIMEOUT).
  if (typeof code === 'number') return jsonRpcErrorOutcome({ code, message: (err as Error).message });
  if (typeof code === 'string') return { errorType: code, ...(err instanceof Error ? { message: err.message } : {}) };
  if (err instanceof Error) return { errorType: err.name && err.name !== 'Error' ? err.name : '_OTHER', message: err.message };
  return { errorType: '_OTHER' };
}

const stringOrUndefined = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}
