import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import type { Attributes } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  ATTR_JSONRPC_KIND,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_REQUEST_DURATION_MS,
  ATTR_SCHEMA_VERSION,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_KEY,
  ATTR_SIDE,
  ATTR_SSE_EVENT_ID,
  ATTR_SSE_EVENT_SEQ,
  ATTR_SSE_PAYLOAD_DIGEST,
  ATTR_SSE_REPLAYED,
  SCHEMA_VERSION,
  SPAN_REQUEST_SETTLED,
  SPAN_SSE_EVENT,
} from '../../packages/instrumentation/src/semconv.js';

/** One span to make with the real SDK. */
export interface SpanSpec {
  name: string;
  attributes?: Attributes;
  /** Start, epoch ms. */
  startMs?: number;
  durationMs?: number;
  parent?: boolean;
}

/**
 * Makes real SDK ReadableSpans (BasicTracerProvider + InMemorySpanExporter) under a resource with
 * `service.name` = `service` (no resource attribute at all when `service` is null).
 */
export function makeSdkSpans(specs: SpanSpec[], service: string | null = 'mcp-server', attributeCountLimit = 128): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(service === null ? {} : { 'service.name': service }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    spanLimits: { attributeCountLimit },
  });
  const tracer = provider.getTracer('forkwatch-test', '0.0.0');
  for (const s of specs) {
    const start = s.startMs ?? 1_764_000_000_123.456;
    const parent = s.parent ? tracer.startSpan('parent', { startTime: start }) : undefined;
    const ctx = parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
    const span = tracer.startSpan(s.name, { kind: SpanKind.INTERNAL, startTime: start, attributes: s.attributes ?? {} }, ctx);
    span.end(start + (s.durationMs ?? 1.5));
    parent?.end(start + 2);
  }
  // With `parent`, the foreign 'parent' span is exported too (after its child).
  return exporter.getFinishedSpans();
}

/** Serializes ReadableSpans with the SDK's own OTLP serializers. */
export function serialize(spans: ReadableSpan[]): { protobuf: Uint8Array; json: string } {
  const protobuf = ProtobufTraceSerializer.serializeRequest(spans)!;
  const json = Buffer.from(JsonTraceSerializer.serializeRequest(spans)!).toString('utf8');
  return { protobuf, json };
}

/** Attributes of a realistic server `forkwatch.sse.event` span. */
export function sseEventAttributes(i: number, side: 'client' | 'server' = 'server'): Attributes {
  return {
    [ATTR_SCHEMA_VERSION]: SCHEMA_VERSION,
    [ATTR_SIDE]: side,
    [ATTR_SESSION_KEY]: 'a3f1c2d4e5b6a7980112233445566778',
    [ATTR_SESSION_INCARNATION]: '0123456789abcdef',
    [ATTR_SSE_EVENT_ID]: `0123456789abcdef-${i}`,
    [ATTR_SSE_EVENT_SEQ]: i,
    [ATTR_SSE_PAYLOAD_DIGEST]: 'deadbeefcafef00d',
    [ATTR_JSONRPC_KIND]: 'response',
    [ATTR_JSONRPC_REQUEST_ID]: String(i),
    [ATTR_SSE_REPLAYED]: false,
  };
}

/** A realistic mix: `forkwatchRatio` of the spans are forkwatch spans, the rest HTTP server spans. */
export function mixedSpecs(count: number, forkwatchRatio: number): SpanSpec[] {
  const specs: SpanSpec[] = [];
  let fw = 0;
  for (let i = 0; i < count; i++) {
    // Spread forkwatch spans evenly through the batch.
    if (Math.floor((i + 1) * forkwatchRatio) > fw) {
      fw++;
      specs.push(
        i % 5 === 0
          ? {
              name: SPAN_REQUEST_SETTLED,
              attributes: {
                [ATTR_SCHEMA_VERSION]: SCHEMA_VERSION,
                [ATTR_SIDE]: 'client',
                [ATTR_SESSION_KEY]: 'a3f1c2d4e5b6a7980112233445566778',
                [ATTR_MCP_METHOD_NAME]: 'tools/call',
                [ATTR_JSONRPC_REQUEST_ID]: String(i),
                [ATTR_REQUEST_DURATION_MS]: 12.25,
              },
            }
          : { name: SPAN_SSE_EVENT, attributes: sseEventAttributes(i) },
      );
    } else {
      specs.push({
        name: 'POST /mcp',
        attributes: {
          'http.request.method': 'POST',
          'url.path': '/mcp',
          'url.scheme': 'http',
          'server.address': 'mcp.internal.example',
          'server.port': 8080,
          'http.response.status_code': 200,
          'network.protocol.version': '1.1',
          'user_agent.original': 'node-fetch/1.0 (+https://github.com/bitinn/node-fetch)',
          'client.address': '10.0.3.17',
          'http.route': '/mcp',
        },
      });
    }
  }
  return specs;
}
