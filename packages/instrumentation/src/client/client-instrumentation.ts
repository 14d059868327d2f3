import { boundedSessionId } from './http-message.js';
import { ClientCore } from './client-core.js';
import { ClientOperations } from '../conventional/client-operations.js';
import { hookTraceMeta } from '../conventional/client-trace-meta.js';
import { DeliveryTracker } from './delivery-tracker.js';
import { FetchExchange } from './fetch-exchange.js';
import type { Channel } from './internal-types.js';
import { RequestTracker } from './request-tracker.js';
import type { AttachableClient, AttachableTransport, ClientInstrumentationOptions, ClientInstrumentationStats, FetchLike } from './types.js';

export type { AttachableClient, AttachableTransport, ClientInstrumentationStats } from './types.js';

/**
 * Client-side forkwatch instrumentation for the MCP SDK's Streamable HTTP transport. It observes
 * and never changes what the SDK sees: see {@link ClientInstrumentation.wrapFetch} and
 * {@link ClientInstrumentation.attach}.
 */
export class ClientInstrumentation {
  private readonly core: ClientCore;
  private readonly delivery: DeliveryTracker;
  private readonly requests: RequestTracker;
  private readonly exchange: FetchExchange;
  private readonly channels = new WeakMap<FetchLike, Channel>();
  private lastChannel: Channel | undefined;
  /** Transports bound to their fetch at construction (the zero-code patch), so attach finds it. */
  private readonly boundChannels = new WeakMap<object, Channel>();
  /** The MCP conventions' spans and metrics: only with `mcpSemconv`. */
  private readonly conventional: ClientOperations | undefined;

  constructor(options: ClientInstrumentationOptions = {}) {
    this.core = new ClientCore(options);
    this.delivery = new DeliveryTracker(this.core);
    this.requests = new RequestTracker(this.core, this.delivery);
    this.exchange = new FetchExchange(this.core, this.delivery);
    this.conventional = options.mcpSemconv === true
      ? new ClientOperations({ tracerProvider: options.tracerProvider, meterProvider: options.meterProvider, salt: options.salt ?? process.env.FORKWATCH_SESSION_SALT ?? '', recordRawSessionId: options.recordRawSessionId ?? false, logger: this.core.log })
      : undefined;
  }

  /** What went wrong without being thrown. */
  get stats(): ClientInstrumentationStats {
    const core = this.core;
    return { hookFailures: core.hookFailures, spanFailures: core.emitter.failures, oversizedEvents: core.oversized, bufferedEvents: core.rings.bufferedEvents };
  }

  /** The incarnation this instrumentation holds for a raw session id, when a server sent one. */
  incarnationOf(sessionId: string): string | undefined {
    const id = boundedSessionId(sessionId, this.core.maxSessionIdChars);
    return id === undefined ? undefined : this.core.sessions.get(id)?.incarnation;
  }

  /**
   * A fetch for `new StreamableHTTPClientTransport(url, { fetch })` that records requests,
   * resumes and SSE events. Bytes pass through unchanged and unbuffered; `traceparent` is added
   * when absent. Each call makes a new connection channel: use one per transport.
   * @param inner the fetch to call. Default `globalThis.fetch`.
   */
  wrapFetch(inner: FetchLike = globalThis.fetch): FetchLike {
    const channel: Channel = { fetch: undefined as unknown as FetchLike, attached: false, requestsByClient: false, pending: [], timer: undefined };
    const exchange = this.exchange;
    const wrapped: FetchLike = (input, init) => exchange.fetchThrough(channel, inner, input, init);
    channel.fetch = wrapped;
    this.channels.set(wrapped, channel);
    this.lastChannel = channel;
    return wrapped;
  }

  /**
   * Observes what reaches the SDK's protocol layer through `transport.onmessage` (an accessor
   * wraps whatever the Client assigns), turning wire events into `delivered`/`dropped`; with a
   * `client`, wraps `client.request` on the instance to emit `forkwatch.request.settled`. The
   * transport is matched to the fetch made for it by `wrapFetch` (the last one made when another
   * layer sits in between). Call before or after `client.connect(transport)`.
   */
  attach(transport: AttachableTransport, client?: AttachableClient): void {
    try {
      const own = (transport as { _fetch?: FetchLike })._fetch;
      const channel = this.boundChannels.get(transport) ?? ((own && this.channels.get(own)) || this.lastChannel);
      if (channel) {
        channel.attached = true;
        this.delivery.hookOnMessage(transport, channel);
      }
      if (client) {
        // Innermost: the context the app (or the operation span below) has active goes into params._meta.
        if (this.core.injectTraceContext) hookTraceMeta(client);
        this.requests.hookRequest(client, transport);
        // After forkwatch's hook, so it runs outside it: forkwatch's spans see the operation span.
        if (this.conventional !== undefined) this.conventional.hookClient(client, transport);
        if (channel) channel.requestsByClient = true;
      }
    } catch (err) {
      this.core.fail('attach', err);
    }
  }

  /**
   * Ties `transport` to the fetch `wrapFetch` made for it, for transports whose SDK wraps the
   * fetch again (redirect policies), so `attach` never guesses. Used by McpForkInstrumentation.
   */
  bindTransport(transport: object, wrapped: FetchLike): void {
    const channel = this.channels.get(wrapped);
    if (channel) this.boundChannels.set(transport, channel);
  }

  /**
   * Emits now what waits on a timer: held-back requests (as still unanswered) and wire events
   * whose delivery is undecided (without a delivery verdict, never as `dropped`: the process is
   * leaving, not the SDK dropping them). Never throws.
   */
  flush(): void {
    try {
      this.delivery.flush();
      this.requests.flush();
    } catch (err) {
      this.core.fail('flush', err);
    }
  }
}

/** Creates the client instrumentation; see {@link ClientInstrumentationOptions} for defaults. */
export function createClientInstrumentation(options: ClientInstrumentationOptions = {}): ClientInstrumentation {
  return new ClientInstrumentation(options);
}
