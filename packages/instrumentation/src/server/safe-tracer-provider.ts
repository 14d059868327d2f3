import { ProxyTracerProvider, trace, type DiagLogger, type TracerProvider } from '@opentelemetry/api';

/**
 * A provider whose getTracer never throws: a broken provider yields a no-op tracer, so creating
 * the instrumentation cannot fail the host. Without `provider` the global one is used.
 */
export function safeTracerProvider(provider: TracerProvider | undefined, logger: DiagLogger): TracerProvider {
  return {
    getTracer(name, version, options) {
      try {
        return (provider ?? trace.getTracerProvider()).getTracer(name, version, options);
      } catch (err) {
        logger.warn('tracer provider failed; forkwatch spans are disabled', err);
        // A ProxyTracerProvider with no delegate hands out no-op tracers.
        return new ProxyTracerProvider().getTracer(name, version, options);
      }
    },
  };
}
