import type { InstrumentationConfig } from '@opentelemetry/instrumentation';
import type { ClientInstrumentationOptions } from '../client/types.js';
import type { ServerInstrumentationOptions } from '../server/types.js';

/**
 * Options of {@link McpForkInstrumentation}. `tracerProvider` is not taken here: the
 * instrumentation uses the provider the OpenTelemetry SDK gives it (`setTracerProvider`), or the
 * global one.
 */
export interface McpForkInstrumentationConfig extends InstrumentationConfig {
  /** Instrument `StreamableHTTPServerTransport`s. Default true. */
  server?: boolean;
  /** Instrument `StreamableHTTPClientTransport`s and the `Client`s that connect them. Default true. */
  client?: boolean;
  /** Server options (docs/instrumentation.md), less `tracerProvider`. */
  serverOptions?: Omit<ServerInstrumentationOptions, 'tracerProvider'>;
  /** Client options (docs/instrumentation.md), less `tracerProvider`. */
  clientOptions?: Omit<ClientInstrumentationOptions, 'tracerProvider'>;
}
