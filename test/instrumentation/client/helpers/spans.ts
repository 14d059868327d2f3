import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

export interface SpanView {
  name: string;
  attributes: Record<string, unknown>;
  parentSpanId: string | undefined;
  /** Start time, epoch ms. */
  startMs: number;
}

/** A real SDK tracer provider exporting to memory, with polling helpers bounded in time. */
export function spanCollector() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const view = (s: ReadableSpan): SpanView => ({ name: s.name, attributes: { ...s.attributes }, parentSpanId: s.parentSpanContext?.spanId, startMs: s.startTime[0] * 1000 + s.startTime[1] / 1e6 });
  const spans = (name?: string): SpanView[] => exporter.getFinishedSpans().filter((s) => !name || s.name === name).map(view);
  return {
    provider,
    exporter,
    spans,
    /** Resolves with the spans once `pred` holds; rejects after `timeoutMs`. */
    async waitFor(pred: (all: SpanView[]) => boolean, timeoutMs = 3000): Promise<SpanView[]> {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const all = spans();
        if (pred(all)) return all;
        if (Date.now() > until) throw new Error(`spans not seen in ${timeoutMs} ms: ${JSON.stringify(all.map((s) => [s.name, s.attributes['forkwatch.sse.event.id'] ?? s.attributes['mcp.method.name']]))}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}
