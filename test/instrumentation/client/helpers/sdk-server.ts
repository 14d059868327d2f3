import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Event store with counter ids (`e1`, `e2`, ...) per session, replaying one stream after the cursor. */
export class CounterEventStore implements EventStore {
  private n = 0;
  private readonly events: Array<{ id: string; streamId: string; message: JSONRPCMessage }> = [];
  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `e${++this.n}`;
    this.events.push({ id, streamId, message });
    return id;
  }
  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.events.find((e) => e.id === eventId)?.streamId;
  }
  async replayEventsAfter(lastEventId: string, { send }: { send: (id: string, m: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const i = this.events.findIndex((e) => e.id === lastEventId);
    if (i < 0) return '';
    const streamId = this.events[i]!.streamId;
    for (const e of this.events.slice(i + 1)) if (e.streamId === streamId) await send(e.id, e.message);
    return streamId;
  }
}

export interface SdkServer {
  url: URL;
  /** Sockets of tools/call POSTs, in order: destroy one to cut its stream. */
  toolSockets: Socket[];
  /** Releases the `slow` tool's wait. */
  release(): void;
  close(): Promise<void>;
}

/**
 * A real MCP SDK server on 127.0.0.1:0 with resumability. Tools: `echo` (two progress
 * notifications, then a result) and `slow` (one progress, then waits for `release()`).
 */
export async function startSdkServer(): Promise<SdkServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const toolSockets: Socket[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));

  const makeServer = (): McpServer => {
    const server = new McpServer({ name: 'test-server', version: '1.0.0' });
    const progress = async (extra: any, n: number): Promise<void> => {
      const token = extra._meta?.progressToken;
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: n, total: 2 } });
    };
    server.registerTool('echo', { description: 'echo' }, async (extra: any) => {
      await progress(extra, 1);
      await progress(extra, 2);
      return { content: [{ type: 'text', text: 'echoed' }] };
    });
    server.registerTool('slow', { description: 'slow' }, async (extra: any) => {
      await progress(extra, 1);
      await gate;
      return { content: [{ type: 'text', text: 'slow done' }] };
    });
    return server;
  };

  const http: Server = createServer(async (req, res) => {
    try {
      let body: unknown;
      if (req.method === 'POST') {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      }
      const sid = req.headers['mcp-session-id'];
      let t = typeof sid === 'string' ? transports.get(sid) : undefined;
      if (!t && req.method === 'POST' && isInitializeRequest(body)) {
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          eventStore: new CounterEventStore(),
          onsessioninitialized: (id) => void transports.set(id, created),
        });
        await makeServer().connect(created);
        t = created;
      }
      if (!t) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      if (req.method === 'POST' && (body as { method?: string }).method === 'tools/call') toolSockets.push(req.socket);
      await t.handleRequest(req, res, body);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const port = (http.address() as { port: number }).port;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    toolSockets,
    release: () => release(),
    async close() {
      release();
      for (const t of transports.values()) await t.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
