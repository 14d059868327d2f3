/**
 * Apps and fetches the server instrumentation tests share: the SDK examples' naive
 * `transports[sessionId]` app (with its rehydrating variants), and client fetches that record or
 * cut SSE bodies.
 */
import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import type { ServerInstrumentation } from '../../../packages/instrumentation/src/server/types.js';
import { INIT_BODY, makeMcpServer, type ToolControl } from './harness.js';

export const SALT = 'test-salt';

/**
 * The SDK example's store with ids that sort in the order they were stored. Its own ids are
 * `stream_ms_random`, and its replay sorts them as strings: two events of one millisecond (a
 * stream's priming event and the tool's first progress, say) come back in random order, and a
 * resume after the priming event then skipped the progress half the time those two shared a
 * millisecond (a test waited for the replayed progress until its suite timed out). Same shape,
 * the random part replaced by a counter of the same width; set on the instance because the SDK
 * declares `generateEventId` private (a subclass may not redeclare it).
 */
function orderedEventStore(): InMemoryEventStore {
  const store = new InMemoryEventStore();
  let stored = 0;
  (store as unknown as { generateEventId(streamId: string): string }).generateEventId = (streamId) =>
    `${streamId}_${Date.now()}_${(stored++).toString(36).padStart(8, '0')}`;
  return store;
}

/** The naive `transports[sessionId]` app of the SDK examples, instrumented. */
export function naiveApp(inst: ServerInstrumentation, unknown: 'reject400' | 'rehydrate' | 'rehydrate-init', control: ToolControl = {}) {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  // One store for all transports, as in the SDK example: what makes a rehydrated replay possible.
  const store = orderedEventStore();
  const handler = inst.wrapHandler(async (req: IncomingMessage, res: ServerResponse) => {
    const sid = req.headers['mcp-session-id'] as string | undefined;
    const existing = sid ? transports.get(sid) : undefined;
    if (existing) return existing.handleRequest(req, res);
    if (!sid && req.method === 'POST') {
      const t: StreamableHTTPServerTransport = inst.observeTransport(
        new StreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          eventStore: store,
          onsessioninitialized: (id) => void transports.set(id, t),
        }),
      );
      t.onclose = () => {
        if (t.sessionId && transports.get(t.sessionId) === t) transports.delete(t.sessionId);
      };
      await makeMcpServer(control).connect(t);
      return t.handleRequest(req, res);
    }
    if (unknown === 'reject400' || !sid) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null }));
      return;
    }
    // The "rehydrate after restart" pattern: a new transport under the client's old id. The fork.
    const t = inst.observeTransport(new StreamableHTTPServerTransport({ sessionIdGenerator: () => sid, eventStore: store }));
    if (unknown === 'rehydrate-init') {
      // Variant: feed the new transport a synthetic initialize, so it believes it was initialized.
      transports.set(sid, t);
      await makeMcpServer(control).connect(t);
      const fake = syntheticRequest();
      await t.handleRequest(fake.req, fake.res, INIT_BODY);
      return t.handleRequest(req, res);
    }
    const inner = (t as unknown as { _webStandardTransport: { sessionId?: string; _initialized: boolean } })._webStandardTransport;
    inner.sessionId = sid;
    inner._initialized = true;
    transports.set(sid, t);
    await makeMcpServer(control).connect(t);
    return t.handleRequest(req, res);
  });
  return { handler, transports };
}

/** An in-process POST request/response pair that no socket ever carried. */
export function syntheticRequest(): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(new Socket());
  const headers = { host: 'localhost', 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  req.method = 'POST';
  req.url = '/mcp';
  req.headers = headers;
  req.rawHeaders = Object.entries(headers).flat();
  req.push(null);
  return { req, res: new ServerResponse(req) };
}

export async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A fetch that keeps a copy of every SSE body of a POST (clone: the client reads its own). */
export function recordingFetch(bodies: string[]): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (init?.method === 'POST' && res.headers.get('content-type')?.includes('text/event-stream')) {
      void res
        .clone()
        .text()
        .then((t) => bodies.push(t), () => undefined);
    }
    return res;
  };
}

/**
 * A fetch that cuts the first `tools/call` SSE stream client-side: it forwards the first event
 * (the priming event), lets the second arrive (so the server has sent it), drops it and errors
 * the stream. The SDK client then reconnects with Last-Event-ID = the priming id.
 */
export function cuttingFetch(onCut: () => void): typeof fetch {
  let armed = true;
  return async (input, init) => {
    const res = await fetch(input, init);
    const isCall = typeof init?.body === 'string' && init.body.includes('"tools/call"');
    if (!armed || !isCall || !res.body || !res.headers.get('content-type')?.includes('text/event-stream')) return res;
    armed = false;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let buf = '';
    let forwarded = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        for (;;) {
          if (!forwarded || !buf.includes('\n\n')) {
            const { value, done } = await reader.read();
            if (done) {
              controller.close();
              return;
            }
            buf += decoder.decode(value, { stream: true });
          }
          const blocks = buf.split('\n\n');
          if (!forwarded && blocks.length > 1) {
            controller.enqueue(encoder.encode(`${blocks[0]}\n\n`));
            forwarded = true;
            buf = blocks.slice(1).join('\n\n');
            return;
          }
          if (forwarded && buf.includes('\n\n')) {
            await reader.cancel();
            controller.error(new Error('cut by test'));
            onCut();
            return;
          }
        }
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
}

