import { propagation, type Context } from '@opentelemetry/api';

/**
 * Injects W3C trace context into a copy of a request's headers. The caller's headers are never
 * changed: a copy is made only if the propagator sets something, and only then is a traceparent
 * of the caller's own looked for (with none active, or with the API's no-op propagator, nothing
 * is set and nothing is looked up).
 */
export class TraceContextInjector {
  /** The request headers propagation.inject is writing for, and their copy once it wrote. */
  private injecting: Headers | undefined;
  private injected: Headers | undefined;
  /** The caller set its own traceparent: it is kept, and nothing else is injected either. */
  private injectRefused = false;
  /** One setter for every request: a closure per call was garbage on the host's hot path. */
  private readonly setter = {
    set: (_carrier: unknown, k: string, v: string): void => {
      const own = this.injecting;
      if (own === undefined || this.injectRefused) return;
      if (this.injected === undefined) {
        if (own.has('traceparent')) {
          this.injectRefused = true;
          return;
        }
        this.injected = new Headers(own);
      }
      this.injected.set(k, v);
    },
  };

  /** The headers to send instead of `headers`, or undefined to send them as they are. */
  inject(ctx: Context, headers: Headers): Headers | undefined {
    this.injecting = headers;
    try {
      propagation.inject(ctx, headers, this.setter);
      return this.injected;
    } finally {
      this.injecting = undefined;
      this.injected = undefined;
      this.injectRefused = false;
    }
  }
}
