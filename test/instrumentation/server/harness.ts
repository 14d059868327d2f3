import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/** A real tracer provider exporting to memory. */
export function tracing(): { provider: BasicTracerProvider; spans: (name?: string) => ReadableSpan[] } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return {
    provider,
    spans: (name) => exporter.getFinishedSpans().filter((s) => name === undefined || s.name === name),
  };
}

/** A node:http server on 127.0.0.1, port 0. */
export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => unknown,
  opts: { maxHeaderSize?: number } = {},
): Promise<{ url: URL; server: HttpServer; close: () => Promise<void> }> {
  const server = createServer(opts, (req, res) => {
    Promise.resolve(handler(req, res)).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Hooks a test can use to pace the `slow` tool. */
export interface ToolControl {
  /** Resolved by the test to let `slow` answer after its first progress notification. */
  proceed?: Promise<void>;
}

/** A fresh McpServer with `echo` and `slow` (one progress notification, then the result). */
export function makeMcpServer(control: ToolControl = {}): McpServer {
  const server = new McpServer({ name: 'test-server', version: '1.0.0' });
  server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerTool('slow', {}, async (extra) => {
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 } });
    }
    if (control.proceed) await control.proceed;
    return { content: [{ type: 'text', text: 'done' }] };
  });
  return server;
}

/** Attribute of a span (typed loosely for assertions). */
export function attr(span: ReadableSpan, name: string): unknown {
  return span.attributes[name];
}

/** Splits an SSE body into events ({id, data}). */
export function parseSse(text: string): Array<{ id?: string; data: string }> {
  const out: Array<{ id?: string; data: string }> = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (block.trim() === '') continue;
    const ev: { id?: string; data: string } = { data: '' };
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('id:')) ev.id = line.slice(3).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    ev.data = data.join('\n');
    out.push(ev);
  }
  return out;
}

export const INIT_BODY = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** Headers of a raw MCP POST. */
export function postHeaders(sessionId?: string): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
  };
  if (sessionId) h['mcp-session-id'] = sessionId;
  return h;
}
