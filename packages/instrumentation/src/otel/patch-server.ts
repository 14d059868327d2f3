import type { ServerInstrumentation } from '../server/types.js';

const ORIGINAL = Symbol('forkwatch.original');

/** The SDK 1.x exports `StreamableHTTPServerTransport`, `@modelcontextprotocol/node` 2.x `NodeStreamableHTTPServerTransport`. */
type TransportModule = Record<string, { prototype: Record<string | symbol, unknown> } | undefined>;

const EXPORT_1X = 'StreamableHTTPServerTransport';

/**
 * Patches `StreamableHTTPServerTransport.prototype.handleRequest` so every transport is observed
 * (or the 2.x `NodeStreamableHTTPServerTransport`: `exportName`) on its first request, before the SDK sees it: what `observeTransport` does by hand. The
 * transport's own wrapper (an own property) then runs first; the prototype hook passes through.
 */
export function patchServerTransport(exports: TransportModule, instrumentation: () => ServerInstrumentation | undefined, exportName = EXPORT_1X): TransportModule {
  const proto = exports?.[exportName]?.prototype;
  if (!proto || typeof proto.handleRequest !== 'function' || proto[ORIGINAL]) return exports;
  const original = proto.handleRequest as (...args: unknown[]) => unknown;
  const observed = new WeakSet<object>();
  const handleRequest = function handleRequest(this: object) {
    if (!observed.has(this)) {
      observed.add(this);
      const fw = instrumentation();
      if (fw) {
        fw.observeTransport(this as never);
        // observeTransport installed the instance's wrapper around this prototype method.
        const own = (this as { handleRequest?: unknown }).handleRequest;
        // eslint-disable-next-line prefer-rest-params
        if (typeof own === 'function' && own !== handleRequest) return (own as (...a: unknown[]) => unknown).apply(this, arguments as unknown as unknown[]);
      }
    }
    // eslint-disable-next-line prefer-rest-params
    return original.apply(this, arguments as unknown as unknown[]);
  };
  proto[ORIGINAL] = original;
  proto.handleRequest = handleRequest;
  return exports;
}

/** Undoes {@link patchServerTransport}; transports already observed stay observed. */
export function unpatchServerTransport(exports: TransportModule, exportName = EXPORT_1X): void {
  const proto = exports?.[exportName]?.prototype;
  if (!proto || !proto[ORIGINAL]) return;
  proto.handleRequest = proto[ORIGINAL];
  delete proto[ORIGINAL];
}
