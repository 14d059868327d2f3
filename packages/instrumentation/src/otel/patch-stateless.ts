import { observeStatelessServers, type StatelessServerOptions } from '../server/v2/observe-stateless.js';

const ORIGINAL = Symbol('forkwatch.original');

type Factory = (...args: never[]) => unknown;
type CreateMcpHandler = ((factory: Factory, ...rest: unknown[]) => unknown) & { [ORIGINAL]?: CreateMcpHandler };
interface ServerModule {
  createMcpHandler?: CreateMcpHandler;
}

/**
 * Replaces `@modelcontextprotocol/server` 2.x's `createMcpHandler` (the stateless handler) with one
 * that wraps the app's server factory in `observeStatelessServers`: what the explicit API does by
 * hand. `options()` is read when the handler is created; `beforeRequest` runs before each
 * per-request server is made (the zero-code setup's first-use check). Never throws into the app.
 */
export function patchCreateMcpHandler(exports: ServerModule, options: () => StatelessServerOptions | undefined, beforeRequest: () => void): ServerModule {
  const original = exports?.createMcpHandler;
  if (typeof original !== 'function' || original[ORIGINAL]) return exports;
  const createMcpHandler = function createMcpHandler(this: unknown, factory: Factory, ...rest: unknown[]) {
    let wrapped = factory;
    try {
      const o = options();
      if (o && typeof factory === 'function') {
        const observed = observeStatelessServers(factory, o);
        wrapped = ((...args: never[]) => {
          beforeRequest();
          return observed(...args);
        }) as Factory;
      }
    } catch {
      wrapped = factory;
    }
    return original.call(this, wrapped, ...rest);
  } as CreateMcpHandler;
  Object.defineProperty(createMcpHandler, ORIGINAL, { value: original });
  exports.createMcpHandler = createMcpHandler;
  return exports;
}

/** Undoes {@link patchCreateMcpHandler} for handlers created from now on. */
export function unpatchCreateMcpHandler(exports: ServerModule): void {
  const patched = exports?.createMcpHandler;
  if (patched && patched[ORIGINAL]) exports.createMcpHandler = patched[ORIGINAL];
}
