/**
 * How a variant of bench/one-variant.ts is started: its node arguments and environment. The
 * NodeSDK variants run under `--import` (zero-code under forkwatch's `/register`, sdk-only and
 * sdk-explicit under bench/sdk-only-register.ts) with the same `OTEL_*` variables, exporting to
 * the caller's sink.
 */

/** Variants of bench/one-variant.ts (see its header). */
export type CountedSides = 'none' | 'both' | 'server' | 'client' | 'zero-code' | 'sdk-only' | 'sdk-explicit' | 'eager';

/** Variants that run under NodeSDK (`--import`), measured on progress-store only. */
export const UNDER_SDK: ReadonlySet<CountedSides> = new Set(['zero-code', 'sdk-only', 'sdk-explicit']);

/**
 * The `--import` arguments and environment additions of `variant`, exporting to `sinkUrl`;
 * `requestSpanDelayMs` goes to both the explicit instrumentation (REQUEST_SPAN_DELAY_MS) and
 * `/register` (FORKWATCH_REQUEST_SPAN_DELAY_MS); `deliveryTimeoutMs`, when given, to the explicit
 * client only (DELIVERY_TIMEOUT_MS: `/register` has no variable for it).
 */
export function variantProcess(variant: CountedSides, sinkUrl: string, requestSpanDelayMs: number, deliveryTimeoutMs?: number): { importArgs: string[]; env: NodeJS.ProcessEnv } {
  const env: NodeJS.ProcessEnv = { VARIANT: variant, SINK_URL: sinkUrl, REQUEST_SPAN_DELAY_MS: String(requestSpanDelayMs) };
  if (deliveryTimeoutMs !== undefined) env.DELIVERY_TIMEOUT_MS = String(deliveryTimeoutMs);
  if (!UNDER_SDK.has(variant)) return { importArgs: [], env };
  Object.assign(env, {
    FORKWATCH_REQUEST_SPAN_DELAY_MS: String(requestSpanDelayMs),
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: sinkUrl,
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
    OTEL_SERVICE_NAME: 'bench',
  });
  const register = variant === 'zero-code' ? '@forkwatch/instrumentation/register' : new URL('./sdk-only-register.js', import.meta.url).href;
  return { importArgs: ['--import', register], env };
}
