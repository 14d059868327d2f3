/**
 * The client request hook on SDK 2.x (`@modelcontextprotocol/client`), over real HTTP to a real
 * 2.x sessionful server: 2.x `client.request` takes its options second for a spec method and
 * third after an explicit result schema, so the progress token (`onprogress`) and the abort
 * signal must be read where each call path puts them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport, fromJsonSchema } from '@modelcontextprotocol/client';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { McpServer, fromJsonSchema as serverSchema } from '@modelcontextprotocol/server';
import { createClientInstrumentation } from '../../../packages/instrumentation/src/client/v2/index.js';
import { listen } from '../server/harness.js';
import { spanCollector, type SpanView } from './helpers/spans.js';

/** A sessionful 2.x app with `work` (progress steps, then a result) and `hold` (waits until cancelled). */
function app() {
  const transports = new Map<string, NodeStreamableHTTPServerTransport>();
  return async (req: IncomingMessage, res: ServerResponse) => {
    const sid = req.headers['mcp-session-id'] as string | undefined;
    const known = sid ? transports.get(sid) : undefined;
    if (known) return known.handleRequest(req, res);
    const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID(), onsessioninitialized: (id: string) => void transports.set(id, transport) });
    const mcp = new McpServer({ name: 'tracker-v2', version: '1.0.0' });
    mcp.registerTool('work', { inputSchema: serverSchema<{ steps: number }>({ type: 'object', properties: { steps: { type: 'number' } } }) }, async (args, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      for (let i = 1; i <= args.steps; i++) {
        if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: args.steps } });
      }
      return { content: [{ type: 'text' as const, text: `worked ${args.steps}` }] };
    });
    mcp.registerTool('hold', {}, async (ctx) => {
      await new Promise<void>((resolve) => {
        if (ctx.mcpReq.signal.aborted) resolve();
        ctx.mcpReq.signal.addEventListener('abort', () => resolve(), { once: true });
        setTimeout(resolve, 5_000).unref();
      });
      return { content: [{ type: 'text' as const, text: 'held' }] };
    });
    await mcp.connect(transport);
    return transport.handleRequest(req, res);
  };
}

describe('client request hook, SDK 2.x (progress tokens and cancels on every call path)', () => {
  const col = spanCollector();
  let http: Awaited<ReturnType<typeof listen>>;
  let client: Client;

  before(async () => {
    http = await listen(app());
    const fw = createClientInstrumentation({ tracerProvider: col.provider, requestSpanDelayMs: 0 });
    const transport = new StreamableHTTPClientTransport(http.url, { fetch: fw.wrapFetch() as never });
    client = new Client({ name: 'tracker-v2-client', version: '1.0.0' });
    fw.attach(transport as never, client as never);
    await client.connect(transport);
  });
  after(async () => {
    await client.close();
    await http.close();
  });

  /** The request spans of the request id that carried `steps` (or tool `tool`), once settled. */
  async function spansOf(pred: (s: SpanView) => boolean): Promise<{ sent: SpanView; settled: SpanView }> {
    const all = await col.waitFor((xs) => xs.some((s) => s.name === 'forkwatch.request.settled' && pred(s)));
    const settled = all.find((s) => s.name === 'forkwatch.request.settled' && pred(s))!;
    const id = settled.attributes['jsonrpc.request.id'];
    const sent = all.find((s) => s.name === 'forkwatch.request.sent' && s.attributes['jsonrpc.request.id'] === id)!;
    assert.ok(sent, `request.sent of request ${String(id)}`);
    return { sent, settled };
  }

  it('callTool with onprogress: request.sent and request.settled carry the progress token (the JSON-RPC id), progress counted', async () => {
    let progress = 0;
    await client.callTool({ name: 'work', arguments: { steps: 3 } }, { onprogress: () => void progress++ });
    assert.equal(progress, 3);
    const { sent, settled } = await spansOf((s) => s.attributes['forkwatch.request.progress_count'] === 3);
    assert.equal(sent.attributes['forkwatch.progress.token'], sent.attributes['jsonrpc.request.id']);
    assert.equal(settled.attributes['forkwatch.progress.token'], sent.attributes['jsonrpc.request.id']);
    assert.equal(settled.attributes['forkwatch.request.outcome'], 'answered');
    assert.equal(settled.attributes['forkwatch.request.progress_count'], 3);
  });

  it('request(req, options) (spec method, options second) and request(req, schema, options): both carry the token', async () => {
    let progress = 0;
    const onprogress = () => void progress++;
    const r1 = await client.request({ method: 'tools/call', params: { name: 'work', arguments: { steps: 2 } } }, { onprogress });
    assert.match(JSON.stringify(r1), /worked 2/);
    const schema = fromJsonSchema<{ content: unknown[] }>({ type: 'object', properties: { content: { type: 'array' } } });
    const r2 = await client.request({ method: 'tools/call', params: { name: 'work', arguments: { steps: 1 } } }, schema, { onprogress });
    assert.match(JSON.stringify(r2), /worked 1/);
    assert.equal(progress, 3);
    const settled = col.spans('forkwatch.request.settled').filter((s) => s.attributes['forkwatch.request.progress_count'] === 2 || s.attributes['forkwatch.request.progress_count'] === 1);
    assert.equal(settled.length, 2, JSON.stringify(col.spans('forkwatch.request.settled').map((s) => s.attributes)));
    for (const s of settled) assert.equal(s.attributes['forkwatch.progress.token'], s.attributes['jsonrpc.request.id']);
  });

  it('a call the app aborts settles cancelled (the signal read from 2.x options), not timeout', async () => {
    const ac = new AbortController();
    const call = client.callTool({ name: 'hold', arguments: {} }, { signal: ac.signal, onprogress: () => {} });
    setTimeout(() => ac.abort('the app gave up'), 50);
    await assert.rejects(call);
    const { settled } = await spansOf((s) => s.attributes['forkwatch.request.outcome'] !== 'answered');
    assert.equal(settled.attributes['forkwatch.request.outcome'], 'cancelled');
    assert.notEqual(settled.attributes['forkwatch.progress.token'], undefined);
  });
});
