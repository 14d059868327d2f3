import type { ClientInstrumentation } from '../client/client-instrumentation.js';
import type { FetchLike } from '../client/types.js';

const ORIGINAL = Symbol('forkwatch.original');

type Ctor = (new (...args: any[]) => object) & { [ORIGINAL]?: Ctor };

interface TransportModule {
  StreamableHTTPClientTransport?: Ctor;
}
interface ClientModule {
  Client?: { prototype: Record<string | symbol, unknown> };
}

/** Transports the patch built, so `Client.connect` attaches only those. */
const made = new WeakSet<object>();

/**
 * Replaces the exported `StreamableHTTPClientTransport` with a subclass whose constructor routes
 * the transport's fetch (the app's own, or the global one) through `wrapFetch`: the transport
 * keeps every option and stays `instanceof` the SDK's class. `outer`, when given, wraps that fetch
 * once more (the SDK 2.x's stateless requests go through the stateless tap). Under ESM the export is replaced
 * through import-in-the-middle's live bindings, under CommonJS on the exports object.
 */
export function patchClientTransport(
  exports: TransportModule,
  instrumentation: () => ClientInstrumentation | undefined,
  outer?: () => ((fetch: FetchLike) => FetchLike) | undefined,
): TransportModule {
  const Original = exports?.StreamableHTTPClientTransport;
  if (typeof Original !== 'function' || Original[ORIGINAL]) return exports;
  class StreamableHTTPClientTransport extends (Original as new (...args: any[]) => object) {
    constructor(...args: any[]) {
      const fw = instrumentation();
      let wrapped: FetchLike | undefined;
      if (fw) {
        try {
          const opts = (args[1] ?? {}) as { fetch?: FetchLike };
          wrapped = fw.wrapFetch(opts.fetch ?? ((input, init) => globalThis.fetch(input, init)));
          // `outer` (2.x: the stateless tap, for requests without a session) sees the app's request first.
          const tap = outer?.();
          args[1] = { ...opts, fetch: tap ? tap(wrapped) : wrapped };
        } catch {
          wrapped = undefined;
        }
      }
      super(...args);
      if (fw && wrapped) {
        fw.bindTransport(this, wrapped);
        made.add(this);
      }
    }
  }
  Object.defineProperty(StreamableHTTPClientTransport, ORIGINAL, { value: Original });
  exports.StreamableHTTPClientTransport = StreamableHTTPClientTransport as unknown as Ctor;
  return exports;
}

/** Undoes {@link patchClientTransport} for transports made from now on. */
export function unpatchClientTransport(exports: TransportModule): void {
  const Patched = exports?.StreamableHTTPClientTransport;
  if (Patched && Patched[ORIGINAL]) exports.StreamableHTTPClientTransport = Patched[ORIGINAL];
}

/**
 * Patches `Client.prototype.connect` so a client connecting a patched transport is attached to it
 * (delivery decisions and request settlement): what `attach(transport, client)` does by hand.
 */
export function patchClient(exports: ClientModule, instrumentation: () => ClientInstrumentation | undefined): ClientModule {
  const proto = exports?.Client?.prototype;
  if (!proto || typeof proto.connect !== 'function' || proto[ORIGINAL]) return exports;
  const original = proto.connect as (...args: unknown[]) => unknown;
  proto[ORIGINAL] = original;
  proto.connect = function connect(this: object, transport: unknown) {
    if (transport && made.has(transport as object)) {
      made.delete(transport as object);
      instrumentation()?.attach(transport as never, this as never);
    }
    // eslint-disable-next-line prefer-rest-params
    return original.apply(this, arguments as unknown as unknown[]);
  };
  return exports;
}

/** Undoes {@link patchClient}. */
export function unpatchClient(exports: ClientModule): void {
  const proto = exports?.Client?.prototype;
  if (!proto || !proto[ORIGINAL]) return;
  proto.connect = proto[ORIGINAL];
  delete proto[ORIGINAL];
}
