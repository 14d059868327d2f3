import { context, trace } from '@opentelemetry/api';
import { withTraceMeta } from './meta-context.js';

const HOOKED = Symbol.for('forkwatch.traceMeta.client');

/**
 * Writes the W3C trace context active when the app calls `client.request()` into the request's
 * `params._meta` (`traceparent`, `tracestate`: the MCP conventions' propagation, SEP-414), next
 * to the HTTP `traceparent` header the fetch wrapper adds. Installed innermost by `attach()`, so
 * an operation span of `mcpSemconv`, started outside it, has already written its own context and
 * is kept. With no active span (or the API's no-op propagator) the request goes out unchanged.
 */
export function hookTraceMeta(client: { request: (...args: any[]) => Promise<any> }): void {
  const c = client as typeof client & { [HOOKED]?: true };
  if (c[HOOKED]) return;
  Object.defineProperty(c, HOOKED, { value: true });
  const original = client.request;
  client.request = function (this: unknown, request: unknown) {
    let next = request;
    try {
      // No span active (the common case without tracing of the app's own): nothing to write, and
      // nothing allocated for it.
      const ctx = context.active();
      if (request !== null && typeof request === 'object' && trace.getSpanContext(ctx) !== undefined) next = withTraceMeta(request, ctx);
    } catch {
      // A throwing propagator costs the _meta context, never the request.
    }
    // eslint-disable-next-line prefer-rest-params
    if (next === request) return original.apply(this, arguments as unknown as unknown[]);
    // eslint-disable-next-line prefer-rest-params
    const args = Array.prototype.slice.call(arguments) as unknown[];
    args[0] = next;
    return original.apply(this, args);
  };
}
