import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createClientInstrumentation } from '../../../packages/instrumentation/src/client/client-instrumentation.js';
import type { FetchLike } from '../../../packages/instrumentation/src/client/types.js';
import { sessionKey } from '../../../packages/instrumentation/src/common/session-key.js';
import * as sc from '../../../packages/instrumentation/src/semconv.js';
import { spanCollector, type SpanView } from './helpers/spans.js';
import { startSdkServer } from './helpers/sdk-server.js';
import { progress, startScriptedServer, toolResult } from './helpers/scripted-server.js';

const FAST_RECONNECT = { initialReconnectionDelay: 20, maxReconnectionDelay: 50, reconnectionDelayGrowFactor: 1, maxRetries: 2 };
const attr = (s: SpanView, k: string): unknown => s.attributes[k];

describe('client instrumentation against the real SDK server', { timeout: 20_000 }, () => {
  it('records request.sent, request.settled with progress, and sse.event spans with seq and digests', async () => {
    const server = await startSdkServer();
    const col = spanCollector();
    const instr = createClientInstrumentation({ tracerProvider: col.provider, salt: 'pepper', deliveryTimeoutMs: 500, requestSpanDelayMs: 0 });
    const transport = new StreamableHTTPClientTransport(server.url, { fetch: instr.wrapFetch() });
    const client = new Client({ name: 't', version: '1' });
    instr.attach(transport, client);
    try {
      await client.connect(transport);
      let progressSeen = 0;
      const result = await client.callTool({ name: 'echo', arguments: {} }, undefined, { onprogress: () => progressSeen++ });
      assert.deepEqual(result.content, [{ type: 'text', text: 'echoed' }]);
      assert.equal(progressSeen, 2);
      const sid = transport.sessionId!;
      const key = sessionKey(sid, 'pepper');
      const all = await col.waitFor((a) => a.some((s) => s.name === sc.SPAN_REQUEST_SETTLED && attr(s, sc.ATTR_MCP_METHOD_NAME) === 'tools/call') && a.filter((s) => s.name === sc.SPAN_SSE_EVENT && attr(s, sc.ATTR_CLIENT_DELIVERY) === 'delivered').length >= 3);

      const sent = all.filter((s) => s.name === sc.SPAN_REQUEST_SENT);
      assert.deepEqual(sent.map((s) => attr(s, sc.ATTR_MCP_METHOD_NAME)), ['initialize', 'tools/call']);
      const call = sent[1]!;
      const callId = attr(call, sc.ATTR_JSONRPC_REQUEST_ID) as string;
      assert.equal(attr(call, sc.ATTR_GEN_AI_TOOL_NAME), 'echo');
      assert.equal(attr(call, sc.ATTR_PROGRESS_TOKEN), callId, 'the SDK uses the request id as progress token');
      assert.equal(attr(call, sc.ATTR_SESSION_KEY), key);
      assert.equal(attr(sent[0]!, sc.ATTR_SESSION_KEY), undefined, 'initialize carries no session yet');

      const settled = all.find((s) => s.name === sc.SPAN_REQUEST_SETTLED && attr(s, sc.ATTR_MCP_METHOD_NAME) === 'tools/call')!;
      assert.equal(attr(settled, sc.ATTR_REQUEST_OUTCOME), 'answered');
      assert.equal(attr(settled, sc.ATTR_REQUEST_PROGRESS_COUNT), 2);
      assert.equal(attr(settled, sc.ATTR_JSONRPC_REQUEST_ID), callId);
      assert.ok((attr(settled, sc.ATTR_REQUEST_DURATION_MS) as number) >= 0);

      const events = all.filter((s) => s.name === sc.SPAN_SSE_EVENT && attr(s, sc.ATTR_SSE_STREAM_ID) === `post:${callId}`);
      // priming event, two progress notifications, the result
      assert.deepEqual(events.map((s) => attr(s, sc.ATTR_JSONRPC_KIND)), ['none', 'notification', 'notification', 'response']);
      assert.deepEqual(events.map((s) => attr(s, sc.ATTR_CLIENT_DELIVERY)), ['no_payload', 'delivered', 'delivered', 'delivered']);
      const seqs = events.map((s) => attr(s, sc.ATTR_SSE_EVENT_SEQ) as number);
      assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
      assert.ok(events.every((s) => attr(s, sc.ATTR_SSE_EVENT_SEQ_SOURCE) === 'counter'));
      assert.ok(events.every((s) => /^[0-9a-f]{16}$/.test(attr(s, sc.ATTR_SSE_PAYLOAD_DIGEST) as string)));
      assert.ok(events.every((s) => attr(s, sc.ATTR_CLIENT_SEEN_BEFORE) === false));
      assert.ok(events.every((s) => attr(s, sc.ATTR_SESSION_KEY) === key));
      assert.equal(attr(events[1]!, sc.ATTR_PROGRESS_TOKEN), callId);
      assert.equal(attr(events[3]!, sc.ATTR_JSONRPC_REQUEST_ID), callId);
      assert.ok(all.every((s) => !JSON.stringify(s.attributes).includes(sid)), 'the raw session id never leaves');
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('holds request spans back: none for a call answered in time, sent stamped with its send time when it waits longer', async () => {
    const server = await startSdkServer();
    const col = spanCollector();
    // Wide margins, so that a loaded machine cannot move a call across the delay: an echo answers
    // well within 1 s, and the slow call waits 1 s past it before its timeout.
    const DELAY_MS = 1000;
    const instr = createClientInstrumentation({ tracerProvider: col.provider, requestSpanDelayMs: DELAY_MS });
    const transport = new StreamableHTTPClientTransport(server.url, { fetch: instr.wrapFetch() });
    const client = new Client({ name: 't', version: '1' });
    instr.attach(transport, client);
    try {
      await client.connect(transport);
      await client.callTool({ name: 'echo', arguments: {} }, undefined, { onprogress: () => undefined });
      await new Promise((r) => setTimeout(r, DELAY_MS + 200));
      const names = (method: string) => col.spans().filter((s) => attr(s, sc.ATTR_MCP_METHOD_NAME) === method).map((s) => s.name);
      assert.deepEqual(names('initialize'), [sc.SPAN_REQUEST_SENT, sc.SPAN_REQUEST_SETTLED], 'initialize is always recorded');
      assert.deepEqual(names('tools/call'), [], 'an answered call costs no span');

      const sentAt = Date.now();
      const slow = client.callTool({ name: 'slow', arguments: {} }, undefined, { onprogress: () => undefined, timeout: 2 * DELAY_MS });
      const all = await col.waitFor((a) => a.some((s) => s.name === sc.SPAN_REQUEST_SENT && attr(s, sc.ATTR_MCP_METHOD_NAME) === 'tools/call'));
      const seenAt = Date.now();
      const sent = all.find((s) => s.name === sc.SPAN_REQUEST_SENT && attr(s, sc.ATTR_MCP_METHOD_NAME) === 'tools/call')!;
      assert.equal(attr(sent, sc.ATTR_GEN_AI_TOOL_NAME), 'slow');
      assert.ok(attr(sent, sc.ATTR_PROGRESS_TOKEN) !== undefined);
      // Emitted only once the delay had passed, yet stamped with the send time, not the emission's.
      assert.ok(seenAt - sent.startMs >= DELAY_MS - 20, `emitted ${seenAt - sent.startMs} ms after its start, before the delay`);
      assert.ok(sent.startMs - sentAt > -20 && sent.startMs - sentAt < DELAY_MS / 2, `stamped with its send time (${sent.startMs - sentAt} ms off)`);
      await assert.rejects(slow);
      const settled = (await col.waitFor((a) => a.some((s) => s.name === sc.SPAN_REQUEST_SETTLED && attr(s, sc.ATTR_MCP_METHOD_NAME) === 'tools/call'))).find(
        (s) => s.name === sc.SPAN_REQUEST_SETTLED && attr(s, sc.ATTR_MCP_METHOD_NAME) === 'tools/call',
      )!;
      assert.equal(attr(settled, sc.ATTR_REQUEST_OUTCOME), 'timeout');
      assert.equal(attr(settled, sc.ATTR_REQUEST_PROGRESS_COUNT), 1);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('reports a cancelled request as cancelled', async () => {
    const server = await startSdkServer();
    const col = spanCollector();
    const instr = createClientInstrumentation({ tracerProvider: col.provider });
    const transport = new StreamableHTTPClientTransport(server.url, { fetch: instr.wrapFetch() });
    const client = new Client({ name: 't', version: '1' });
    instr.attach(transport, client);
    try {
      await client.connect(transport);
      const ac = new AbortController();
      const call = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: ac.signal, onprogress: () => ac.abort('user gave up') });
      await assert.rejects(call);
      const all = await col.waitFor((a) => a.some((s) => s.name === sc.SPAN_REQUEST_SETTLED && attr(s, sc.ATTR_MCP_METHOD_NAME) === 'tools/call'));
      const settled = all.find((s) => s.name === sc.SPAN_REQUEST_SETTLED && attr(s, sc.ATTR_MCP_METHOD_NAME) === 'tools/call')!;
      assert.equal(attr(settled, sc.ATTR_REQUEST_OUTCOME), 'cancelled');
      assert.equal(attr(settled, sc.ATTR_REQUEST_PROGRESS_COUNT), 1);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('reports a healthy resume after the stream is cut server-side', async () => {
    const server = await startSdkServer();
    const col = spanCollector();
    const instr = createClientInstrumentation({ tracerProvider: col.provider, deliveryTimeoutMs: 500, requestSpanDelayMs: 0 });
    const transport = new StreamableHTTPClientTransport(server.url, { fetch: instr.wrapFetch(), reconnectionOptions: FAST_RECONNECT });
    const client = new Client({ name: 't', version: '1' });
    instr.attach(transport, client);
    try {
      await client.connect(transport);
      const pending = client.callTool({ name: 'slow', arguments: {} }, undefined, {
        onprogress: () => {
          // Cut the tool's stream once its first progress arrived, then let the tool finish.
          server.toolSockets[0]?.destroy();
          setTimeout(() => server.release(), 30);
        },
      });
      const result = await pending;
      assert.deepEqual(result.content, [{ type: 'text', text: 'slow done' }]);
      const all = await col.waitFor((a) => a.some((s) => s.name === sc.SPAN_RESUME) && a.some((s) => s.name === sc.SPAN_REQUEST_SETTLED && attr(s, sc.ATTR_MCP_METHOD_NAME) === 'tools/call'));
      const resume = all.find((s) => s.name === sc.SPAN_RESUME)!;
      assert.equal(attr(resume, sc.ATTR_RESUME_OUTCOME), 'resumed');
      assert.equal(attr(resume, sc.ATTR_HTTP_RESPONSE_STATUS_CODE), 200);
      assert.equal(attr(resume, sc.ATTR_HTTP_REQUEST_METHOD), 'GET');
      const callId = attr(all.find((s) => s.name === sc.SPAN_REQUEST_SENT && attr(s, sc.ATTR_MCP_METHOD_NAME) === 'tools/call')!, sc.ATTR_JSONRPC_REQUEST_ID);
      const cursor = attr(resume, sc.ATTR_RESUME_LAST_EVENT_ID) as string;
      const before = all.find((s) => s.name === sc.SPAN_SSE_EVENT && attr(s, sc.ATTR_SSE_EVENT_ID) === cursor)!;
      assert.equal(attr(before, sc.ATTR_SSE_STREAM_ID), `post:${callId}`);
      // The replayed result is named after the stream it continues and was delivered.
      const after = await col.waitFor((a) => a.some((s) => s.name === sc.SPAN_SSE_EVENT && attr(s, sc.ATTR_JSONRPC_KIND) === 'response' && attr(s, sc.ATTR_JSONRPC_REQUEST_ID) === callId));
      const res = after.find((s) => s.name === sc.SPAN_SSE_EVENT && attr(s, sc.ATTR_JSONRPC_KIND) === 'response' && attr(s, sc.ATTR_JSONRPC_REQUEST_ID) === callId)!;
      assert.equal(attr(res, sc.ATTR_SSE_STREAM_ID), `post:${callId}`);
      assert.equal(attr(res, sc.ATTR_CLIENT_DELIVERY), 'delivered');
      assert.ok((attr(res, sc.ATTR_SSE_EVENT_SEQ) as number) > (attr(before, sc.ATTR_SSE_EVENT_SEQ) as number));
    } finally {
      await client.close();
      await server.close();
    }
  });
});

/** An app's naive dedup: drops SSE events whose (session id, event id) it has seen. The seed's bug. */
function naiveDedupFetch(inner: FetchLike): FetchLike {
  const seen = new Set<string>();
  return async (input, init) => {
    const res = await inner(input, init);
    if (!res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return res;
    const sid = res.headers.get('mcp-session-id') ?? new Headers(init?.headers).get('mcp-session-id') ?? '';
    let buf = '';
    const dec = new TextDecoder();
    const enc = new TextEncoder();
    const body = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          buf += dec.decode(chunk, { stream: true });
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i + 2);
            buf = buf.slice(i + 2);
            const id = /^id: (.*)$/m.exec(block)?.[1];
            if (id !== undefined) {
              if (seen.has(`${sid}|${id}`)) continue;
              seen.add(`${sid}|${id}`);
            }
            controller.enqueue(enc.encode(block));
          }
        },
      }),
    );
    return new Response(body, { status: res.status, headers: res.headers });
  };
}

describe('client instrumentation against a server that forks on resume', { timeout: 20_000 }, () => {
  it('shows the naive dedup dropping the forked replay: seen_before and dropped', async () => {
    const server = await startScriptedServer({
      onToolCall(ctx) {
        const w = ctx.open();
        w.event('e1');
        w.event('e2', progress(ctx.progressToken, 1));
        w.event('e3', progress(ctx.progressToken, 2));
        setTimeout(() => w.cut(), 30);
      },
      onResume(ctx) {
        // The seed's server: no 404, a fresh log from e1 under the same id, the tool re-executed.
        const w = ctx.open();
        // The SDK's ids and progress tokens restart at 0 per protocol instance: they collide.
        w.event('e1', progress(1, 1));
        w.event('e2', toolResult(1, 'forked result'));
      },
    });
    const col = spanCollector();
    const instr = createClientInstrumentation({ tracerProvider: col.provider, deliveryTimeoutMs: 150 });
    const transport = new StreamableHTTPClientTransport(server.url, { fetch: naiveDedupFetch(instr.wrapFetch()), reconnectionOptions: FAST_RECONNECT });
    const client = new Client({ name: 't', version: '1' });
    instr.attach(transport, client);
    try {
      await client.connect(transport);
      const t0 = Date.now();
      await assert.rejects(client.callTool({ name: 'x', arguments: {} }, undefined, { onprogress: () => undefined, timeout: 700 }), /timed out/);
      assert.ok(Date.now() - t0 >= 650, 'the request hangs until its timeout: the seed failure');
      const all = await col.waitFor((a) => a.filter((s) => s.name === sc.SPAN_SSE_EVENT && attr(s, sc.ATTR_CLIENT_SEEN_BEFORE) === true && attr(s, sc.ATTR_CLIENT_DELIVERY) === 'dropped').length >= 2 && a.some((s) => s.name === sc.SPAN_REQUEST_SETTLED && attr(s, sc.ATTR_MCP_METHOD_NAME) === 'tools/call'));
      const resume = all.find((s) => s.name === sc.SPAN_RESUME)!;
      assert.equal(attr(resume, sc.ATTR_RESUME_LAST_EVENT_ID), 'e3');
      assert.equal(attr(resume, sc.ATTR_RESUME_OUTCOME), 'resumed', 'the client alone cannot tell: same id, no incarnation');
      const replay = all.filter((s) => s.name === sc.SPAN_SSE_EVENT && attr(s, sc.ATTR_CLIENT_SEEN_BEFORE) === true);
      assert.deepEqual(replay.map((s) => [attr(s, sc.ATTR_SSE_EVENT_ID), attr(s, sc.ATTR_SSE_EVENT_SEQ), attr(s, sc.ATTR_CLIENT_DELIVERY), attr(s, sc.ATTR_JSONRPC_KIND)]), [
        ['e1', 1, 'dropped', 'notification'],
        ['e2', 2, 'dropped', 'response'],
      ]);
      // Same stream name as the stream it claims to continue: the detector sees seq 1 after cursor 3.
      assert.equal(attr(replay[0]!, sc.ATTR_SSE_STREAM_ID), 'post:1');
      const firstE1 = all.find((s) => s.name === sc.SPAN_SSE_EVENT && attr(s, sc.ATTR_SSE_EVENT_ID) === 'e1' && attr(s, sc.ATTR_CLIENT_SEEN_BEFORE) === false)!;
      assert.notEqual(attr(firstE1, sc.ATTR_SSE_PAYLOAD_DIGEST), attr(replay[0]!, sc.ATTR_SSE_PAYLOAD_DIGEST), 'a different payload under a seen id');
      const settled = all.find((s) => s.name === sc.SPAN_REQUEST_SETTLED && attr(s, sc.ATTR_MCP_METHOD_NAME) === 'tools/call')!;
      assert.equal(attr(settled, sc.ATTR_REQUEST_OUTCOME), 'timeout');
      assert.equal(attr(settled, sc.ATTR_REQUEST_PROGRESS_COUNT), 2);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
