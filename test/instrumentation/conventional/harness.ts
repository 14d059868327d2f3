
import { AggregationTemporality, MeterProvider, MetricReader, type HistogramMetricData, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/** A reader a test collects from when it wants (no timer). */
class PullReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/**
 * A real OpenTelemetry SDK: a NodeTracerProvider registered globally (AsyncLocalStorage context
 * manager, W3C propagator: what carries context through `context.with` and into `_meta`) exporting
 * spans to memory, and a MeterProvider whose histograms a test collects on demand.
 */
export function otelSdk(): {
  tracerProvider: NodeTracerProvider;
  meterProvider: MeterProvider;
  spans: (pred?: (s: ReadableSpan) => boolean) => ReadableSpan[];
  histogram: (name: string) => Promise<Array<DataPoint<Histogram>>>;
  boundaries: (name: string) => Promise<number[] | undefined>;
} {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  tracerProvider.register();
  const reader = new PullReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const find = async (name: string): Promise<HistogramMetricData | undefined> => {
    const { resourceMetrics } = await reader.collect();
    for (const sm of resourceMetrics.scopeMetrics) for (const m of sm.metrics) if (m.descriptor.name === name) return m as HistogramMetricData;
    return undefined;
  };
  return {
    tracerProvider,
    meterProvider,
    spans: (pred) => exporter.getFinishedSpans().filter((s) => pred === undefined || pred(s)),
    histogram: async (name) => (await find(name))?.dataPoints ?? [],
    boundaries: async (name) => (await find(name))?.dataPoints[0]?.value.buckets.boundaries,
  };
}

/** Until `fn` returns a value, polling; fails with `what` after `ms`. */
export async function waitFor<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

