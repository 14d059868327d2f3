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
  /**
   * Emit the OpenTelemetry MCP semantic conventions' operation spans and
   * `mcp.{client,server}.operation.duration` histograms on both sides, besides forkwatch's own
   * spans (see `mcpSemconv` of the server and client options; a side's own setting wins). The
   * histograms go to the meter provider the OpenTelemetry SDK gives the instrumentation.
   * Zero code: `FORKWATCH_MCP_SEMCONV=1`. Default false.
   */
  mcpSemconv?: boolean;
  /** Server options (docs/instrumentation.md), less `tracerProvider` and `meterProvider`. */
  serverOptions?: Omit<ServerInstrumentationOptions, 'tracerProvider' | 'meterProvider'>;
  /** Client options (docs/instrumentation.md), less `tracerProvider` and `meterProvider`. */
  clientOptions?: Omit<ClientInstrumentationOptions, 'tracerProvider' | 'meterProvider'>;
}
