/** The server instrumentation never breaks its host: throwing tracers, hostile headers. */
import { request as httpRequest } from 'node:http';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type TracerProvider } from '@opentelemetry/api';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createServerInstrumentation } from '../../../packages/instrumentation/src/server/server-instrumentation.js';
import { ATTR_RESUME_LAST_EVENT_ID, SPAN_RESUME } from '../../../packages/instrumentation/src/semconv.js';
import { attr, listen, tracing } from './harness.js';
import { naiveApp } from './naive-app.js';

describe('server instrumentation, host safety', { timeout: 20_000 }, () => {
  it('never breaks the server: throwing tracer provider, throwing tracer, 10 MB header', async () => {
    const throwingProvider: TracerProvider = {
      getTracer() {
        throw new Error('provider boom');
      },
    };
    const throwingTracer: TracerProvider = {
      getTracer() {
        return {
          startSpan() {
            throw new Error('span boom');
          },
          startActiveSpan() {
            throw new Error('span boom');
          },
        } as never;
      },
    };
    for (const tracerProvider of [throwingProvider, throwingTracer]) {
      const inst = createServerInstrumentation({ tracerProvider });
      const app = naiveApp(inst, 'reject400');
      const srv = await listen(app.handler);
      const client = new Client({ name: 'c', version: '1' });
      try {
        await client.connect(new StreamableHTTPClientTransport(srv.url));
        const out = await client.callTool({ name: 'echo', arguments: { text: 'still fine' } });
        assert.deepEqual(out.content, [{ type: 'text', text: 'still fine' }]);
        if (tracerProvider === throwingTracer) assert.ok(inst.failures > 0, 'failures are counted');
      } finally {
        await client.close();
        await srv.close();
      }
    }

    // A 10 MB Last-Event-ID and session id: answered, recorded cut to 256 chars.
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider });
    const app = naiveApp(inst, 'reject400');
    const srv = await listen(app.handler, { maxHeaderSize: 32 * 1024 * 1024 });
    try {
      const huge = 'e'.repeat(10 * 1024 * 1024);
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(srv.url, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': `s${huge}`, 'last-event-id': huge } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(status, 400);
      const resume = t.spans(SPAN_RESUME)[0]!;
      assert.equal(String(attr(resume, ATTR_RESUME_LAST_EVENT_ID)).length, 256);
    } finally {
      await srv.close();
    }
  });
});
