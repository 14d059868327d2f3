/**
 * The guard throws into the host only by its documented path: a rejected call (or connect) with a
 * SessionForkError. Real SDK clients (1.x and 2.x) against a scripted server; every uncaught
 * exception and unhandled rejection of the process is recorded and must stay none.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createClientGuard } from '../../../packages/instrumentation/src/client/client-guard.js';
import { createClientInstrumentation } from '../../../packages/instrumentation/src/client/client-instrumentation.js';
import { connectGuarded as connectGuardedV2 } from '../../../packages/instrumentation/src/client/v2/connect-guarded.js';
import { SessionForkError } from '../../../packages/instrumentation/src/client/session-fork-error.js';
import { progress, startScriptedServer } from './helpers/scripted-server.js';

const escaped: unknown[] = [];
const record = (e: unknown): void => void escaped.push(e);
before(() => {
  process.on('uncaughtException', record);
  process.on('unhandledRejection', record);
});
after(() => {
  process.off('uncaughtException', record);
  process.off('unhandledRejection', record);
});

/** Lets timers, immediates and stream callbacks of a fork run before escapes are counted. */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 200));

const HEADER_INC = 'aaaaaaaaaaaaaaaa';
const META_INC = 'bbbbbbbbbbbbbbbb';

/**
 * Answers initialize as JSON whose `Mcp-Session-Incarnation` header and `_meta` incarnation
 * disagree: one of them was overridden on the way (a proxy that mints its own in front of a
 * server that mints too). Which one is the session's cannot be known: a fork.
 */
async function overriddenIncarnationServer(): Promise<{ url: URL; close(): Promise<void> }> {
  const http: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: number; method: string; params?: { protocolVersion?: string } };
    const headers = { 'content-type': 'application/json', 'mcp-session-id': 'sess-1', 'mcp-session-incarnation': HEADER_INC };
    if (msg.id === undefined) return void res.writeHead(202, headers).end();
    const result =
      msg.method === 'initialize'
        ? { protocolVersion: msg.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' }, _meta: { 'forkwatch/incarnation': META_INC } }
        : { content: [] };
    res.writeHead(200, headers).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: new URL(`http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`),
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}

const isFork = (kind: string) => (e: unknown) => {
  assert.ok(e instanceof SessionForkError, `expected SessionForkError, got ${String(e)}`);
  assert.equal(e.kind, kind);
  return true;
};

describe('client guard: nothing escapes into the host', { timeout: 30_000 }, () => {
  it('SDK 1.x: an initialize answer whose incarnation was overridden rejects connect, nothing uncaught', async () => {
    const server = await overriddenIncarnationServer();
    const guard = createClientGuard();
    const instr = createClientInstrumentation({ guarded: true });
    const forks: string[] = [];
    guard.onFork((e) => forks.push(e.kind));
    const transport = new StreamableHTTPClientTransport(server.url, { fetch: guard.wrapFetch(instr.wrapFetch()) });
    const client = new Client({ name: 't', version: '1' });
    guard.attach(transport, client);
    instr.attach(transport, client);
    try {
      await assert.rejects(client.connect(transport, { timeout: 5000 }), isFork('incarnation_changed'));
      await assert.rejects(client.listTools(), isFork('incarnation_changed'));
      await settle();
      assert.deepEqual(forks, ['incarnation_changed']);
      assert.deepEqual(escaped, []);
    } finally {
      await client.close().catch(() => undefined);
      await server.close();
    }
  });

  it('SDK 2.x (connectGuarded): the same answer rejects connectGuarded, nothing uncaught', async () => {
    const server = await overriddenIncarnationServer();
    try {
      await assert.rejects(connectGuardedV2({ url: server.url, clientInfo: { name: 't', version: '1' }, requestTimeoutMs: 5000 }), isFork('incarnation_changed'));
      await settle();
      assert.deepEqual(escaped, []);
    } finally {
      await server.close();
    }
  });

  it('a transport whose close() throws instead of rejecting: the fork still rejects the call, nothing uncaught', async () => {
    const server = await startScriptedServer({
      onToolCall(ctx) {
        const w = ctx.open();
        w.event('e1');
        w.event('e2', progress(ctx.progressToken, 1));
        setTimeout(() => w.cut(), 30);
      },
      onResume: (ctx) => ctx.reject(404),
    });
    const guard = createClientGuard();
    const transport = new StreamableHTTPClientTransport(server.url, {
      fetch: guard.wrapFetch(),
      reconnectionOptions: { initialReconnectionDelay: 20, maxReconnectionDelay: 50, reconnectionDelayGrowFactor: 1, maxRetries: 2 },
    });
    const client = new Client({ name: 't', version: '1' });
    guard.attach(transport, client);
    await client.connect(transport);
    const realClose = transport.close.bind(transport);
    // A host's transport wrapper that throws synchronously (not a rejected promise).
    (transport as { close: () => Promise<void> }).close = () => {
      void realClose();
      throw new Error('host close failed');
    };
    try {
      await assert.rejects(client.callTool({ name: 'x', arguments: {} }, undefined, { onprogress: () => undefined, timeout: 10_000 }), isFork('session_not_found'));
      await settle();
      assert.deepEqual(escaped.map(String), []);
    } finally {
      await realClose().catch(() => undefined);
      await server.close();
    }
  });
});
