import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connectGuarded } from '../../../packages/instrumentation/src/client/connect-guarded.js';
import { createClientInstrumentation } from '../../../packages/instrumentation/src/client/client-instrumentation.js';
import { SessionForkError } from '../../../packages/instrumentation/src/client/session-fork-error.js';
import * as sc from '../../../packages/instrumentation/src/semconv.js';
import { spanCollector } from './helpers/spans.js';
import { progress, startScriptedServer, toolResult } from './helpers/scripted-server.js';

const FAST_RECONNECT = { initialReconnectionDelay: 20, maxReconnectionDelay: 50, reconnectionDelayGrowFactor: 1, maxRetries: 2 };

describe('connectGuarded', { timeout: 20_000 }, () => {
  it('re-initializes after a 404 on resume and returns the retried result', async () => {
    const server = await startScriptedServer({
      incarnation: 'cccccccccccccccc',
      onToolCall(ctx) {
        const w = ctx.open();
        if (ctx.callIndex === 0) {
          w.event('e1');
          w.event('e2', progress(ctx.progressToken, 1));
          setTimeout(() => w.cut(), 30);
        } else {
          w.event('e1', toolResult(ctx.requestId, `answered on ${ctx.sessionId}`));
          w.end();
        }
      },
      onResume: (ctx) => ctx.reject(404), // the reaper evicted the session: a correct server
    });
    const col = spanCollector();
    const instrumentation = createClientInstrumentation({ tracerProvider: col.provider, guarded: true, requestSpanDelayMs: 0 });
    const forks: string[] = [];
    const gc = await connectGuarded({
      url: server.url,
      clientInfo: { name: 'guarded', version: '1' },
      transportOptions: { reconnectionOptions: FAST_RECONNECT },
      instrumentation,
      guardOptions: { tracerProvider: col.provider },
      requestTimeoutMs: 10_000,
    });
    gc.guard.onFork((e) => forks.push(e.kind));
    try {
      assert.equal(gc.sessionId, 'sess-1');
      assert.equal(gc.incarnation, 'cccccccccccccccc');
      const firstClient = gc.client;
      const t0 = Date.now();
      const res = await gc.callTool({ name: 'x', arguments: {} }, { onprogress: () => undefined });
      assert.ok(Date.now() - t0 < 3000, 'recovered well under the request timeout');
      assert.deepEqual(res.content, [{ type: 'text', text: 'answered on sess-2' }]);
      assert.deepEqual(forks, ['session_not_found']);
      assert.equal(gc.sessionId, 'sess-2');
      assert.notEqual(gc.client, firstClient);
      assert.deepEqual(server.log.filter((l) => l.rpc === 'initialize').map((l) => l.method), ['POST', 'POST']);
      const all = await col.waitFor((a) => a.filter((s) => s.name === sc.SPAN_REQUEST_SETTLED && s.attributes[sc.ATTR_MCP_METHOD_NAME] === 'tools/call').length === 2);
      const outcomes = all.filter((s) => s.name === sc.SPAN_REQUEST_SETTLED && s.attributes[sc.ATTR_MCP_METHOD_NAME] === 'tools/call').map((s) => s.attributes[sc.ATTR_REQUEST_OUTCOME]);
      assert.deepEqual(outcomes, ['failed_session_lost', 'answered']);
      assert.equal(all.find((s) => s.name === sc.SPAN_RESUME)?.attributes[sc.ATTR_RESUME_OUTCOME], 'rejected_404');
    } finally {
      await gc.close();
      await server.close();
    }
  });

  it('retries once only: a second fork propagates', async () => {
    const server = await startScriptedServer({
      onToolCall(ctx) {
        const w = ctx.open({ 'mcp-session-id': 'sess-elsewhere' });
        w.event('e1', toolResult(ctx.requestId, 'never'));
        w.end();
      },
    });
    const gc = await connectGuarded({ url: server.url, clientInfo: { name: 'guarded', version: '1' }, requestTimeoutMs: 10_000 });
    try {
      await assert.rejects(gc.callTool({ name: 'x', arguments: {} }), (e: unknown) => e instanceof SessionForkError && e.kind === 'session_id_changed');
      assert.equal(server.sessions.length, 2, 'one re-initialize, then the error');
    } finally {
      await gc.close();
      await server.close();
    }
  });

  it('calls failed by one fork share one re-initialize', async () => {
    let resumed!: () => void;
    const resumeAnswered = new Promise<void>((r) => (resumed = r));
    const server = await startScriptedServer({
      onToolCall(ctx) {
        const w = ctx.open();
        if (ctx.sessionId === 'sess-1' && ctx.callIndex === 0) {
          w.event('e1');
          w.event('e2', progress(ctx.progressToken, 1));
          setTimeout(() => w.cut(), 30);
          return;
        }
        if (ctx.sessionId === 'sess-1') {
          w.event('e1'); // a rehydrated life's fresh log: sequence_regression
          return;
        }
        // The new session numbers its events per session, as event ids must be unique in it.
        w.event(`e${ctx.callIndex}`, toolResult(ctx.requestId, `answered on ${ctx.sessionId}`));
        w.end();
      },
      onResume(ctx) {
        ctx.open();
        resumed();
      },
    });
    const gc = await connectGuarded({
      url: server.url,
      clientInfo: { name: 'guarded', version: '1' },
      transportOptions: { reconnectionOptions: FAST_RECONNECT },
      requestTimeoutMs: 10_000,
    });
    try {
      const first = gc.callTool({ name: 'x', arguments: {} }, { onprogress: () => undefined });
      await resumeAnswered;
      const second = gc.callTool({ name: 'x', arguments: {} }, { onprogress: () => undefined });
      const results = await Promise.all([first, second]);
      for (const r of results) assert.deepEqual(r.content, [{ type: 'text', text: 'answered on sess-2' }]);
      assert.deepEqual(server.sessions, ['sess-1', 'sess-2'], 'one new session for both calls');
    } finally {
      await gc.close();
      await server.close();
    }
  });
});
