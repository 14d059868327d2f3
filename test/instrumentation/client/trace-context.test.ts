import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { context, trace } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createClientInstrumentation } from '../../../packages/instrumentation/src/client/client-instrumentation.js';
import * as sc from '../../../packages/instrumentation/src/semconv.js';

// This file registers a global provider (W3C propagator, async context): it runs in its own process.
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();

describe('trace context', () => {
  it('injects traceparent when absent, keeps one already set, and parents its spans on the active span', async () => {
    const seen: Headers[] = [];
    const inner = async (_i: string | URL | Request, init?: RequestInit) => {
      seen.push(new Headers(init?.headers));
      return new Response('', { status: 202 });
    };
    const f = createClientInstrumentation().wrapFetch(inner);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
    const parent = trace.getTracer('host').startSpan('host request');
    await context.with(trace.setSpan(context.active(), parent), async () => {
      await f('http://127.0.0.1:1/mcp', { method: 'POST', body, headers: { 'mcp-session-id': 's' } });
      await f('http://127.0.0.1:1/mcp', { method: 'POST', body, headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
    });
    parent.end();
    const traceId = parent.spanContext().traceId;
    assert.match(seen[0]!.get('traceparent') ?? '', new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    assert.equal(seen[0]!.get('mcp-session-id'), 's', 'other headers kept');
    assert.equal(seen[1]!.get('traceparent'), '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    const sent = exporter.getFinishedSpans().filter((s) => s.name === sc.SPAN_REQUEST_SENT);
    assert.equal(sent.length, 2);
    assert.ok(sent.every((s) => s.spanContext().traceId === traceId && s.parentSpanContext?.spanId === parent.spanContext().spanId));
  });
});
