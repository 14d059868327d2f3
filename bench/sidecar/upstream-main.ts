/**
 * Child of `npm run bench -- sidecar`: a real MCP SDK server (McpServer, Streamable HTTP, the
 * SDK's InMemoryEventStore, so every SSE event carries an id) in a process of its own. Its tool
 * `progress` sends `n` progress notifications, then answers; given `sentAt` (the client's clock
 * when it sent the call), it reports the request's transit and when each message left
 * (bench/sidecar/transit-clock.ts). Prints `PORT n` once listening; exits on SIGTERM.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { z } from 'zod';
import { clock } from './transit-clock.js';

function buildMcp(): McpServer {
  const mcp = new McpServer({ name: 'sidecar-bench', version: '1.0.0' });
  const schema = { n: z.number().int(), sentAt: z.number().optional() };
  mcp.registerTool('progress', { description: 'n progress notifications, then the answer', inputSchema: schema }, async ({ n, sentAt }, extra) => {
    // sentAt (the latency phase): the request's transit is read here, and each message says when it left.
    const requestMs = sentAt === undefined ? undefined : clock() - sentAt;
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      for (let i = 1; i <= n; i++) {
        const params = { progressToken: token, progress: i, total: n, ...(sentAt === undefined ? {} : { message: String(clock()) }) };
        await extra.sendNotification({ method: 'notifications/progress', params });
      }
    }
    return { content: [{ type: 'text', text: requestMs === undefined ? `done ${n}` : `done ${n} ${requestMs} ${clock()}` }] };
  });
  return mcp;
}

const transports = new Map<string, StreamableHTTPServerTransport>();
const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
  const id = req.headers['mcp-session-id'];
  let transport = typeof id === 'string' ? transports.get(id) : undefined;
  if (!transport) {
    const t = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      eventStore: new InMemoryEventStore(),
      onsessioninitialized: (sid) => void transports.set(sid, t),
    });
    transport = t;
    await buildMcp().connect(t);
  }
  await transport.handleRequest(req, res);
};
const server = createServer((req, res) => void handler(req, res).catch(() => res.destroy()));
// Kept-alive sockets from the proxies stay up between the bench's rounds.
server.keepAliveTimeout = 0;
server.listen(0, '127.0.0.1', () => console.log(`PORT ${(server.address() as AddressInfo).port}`));
process.once('SIGTERM', () => process.exit(0));
