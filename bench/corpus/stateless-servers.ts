import { createServer, type Server } from 'node:http';
import type { TracerProvider } from '@opentelemetry/api';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { McpServer as McpServerV2, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { z } from 'zod';
import { createServerInstrumentation } from '@forkwatch/instrumentation/server';
import { observeStatelessServers } from '@forkwatch/instrumentation/server/v2';

/** The tool every stateless corpus server offers: a slow report sending one progress notification per step. */
export const STATELESS_TOOL = 'report';

/** One run of the tool, by the server's own account. */
export interface StatelessToolRun {
  topic: string;
  startedAtMs: number;
  /** When the run's response stream closed before its answer (the HTTP response, as the server saw it), if it did. */
  closedAtMs?: number;
  /** The handler ran all its steps and returned (it never stops early: the work a cut or a cancel leaves running). */
  completedAtMs?: number;
  /** Notifications the handler sent after the stream had closed (work for nobody, whatever the SDK then did with them). */
  sentAfterClose: number;
  /** Of those, the ones the SDK accepted (the send resolved): 1.x resolves them, 2.x rejects them. */
  acceptedAfterClose: number;
}

export interface StatelessServer {
  port: number;
  runs: StatelessToolRun[];
  close(): Promise<void>;
}

export interface StatelessServerOptions {
  sdk: '1.x' | '2.x';
  steps: number;
  stepMs: number;
  /** Instrument the server in-process (absent: an uninstrumented server, e.g. behind `forkwatch proxy`). */
  tracerProvider?: TracerProvider;
  salt: string;
}

/**
 * A stateless MCP server over loopback, as test/e2e/stateless-v1.test.ts (SDK 1.x,
 * `sessionIdGenerator: undefined`, a server and transport per request) and stateless-v2.test.ts
 * (SDK 2.x `createMcpHandler`) run it. Its handler never honours a cancel or a closed stream, so
 * what a cut or a cancel leaves running is real; each run keeps its own account (`runs`) from
 * which the corpus labels work after a close and duplicate execution.
 */
export async function startStatelessServer(o: StatelessServerOptions): Promise<StatelessServer> {
  const t0 = Date.now();
  const runs: StatelessToolRun[] = [];
  const work = async (topic: string, isClosed: () => boolean, send: (i: number) => Promise<unknown>): Promise<string> => {
    const run: StatelessToolRun = { topic, startedAtMs: Date.now() - t0, sentAfterClose: 0, acceptedAfterClose: 0 };
    runs.push(run);
    for (let i = 1; i <= o.steps; i++) {
      await new Promise((r) => setTimeout(r, o.stepMs));
      const closed = isClosed();
      if (closed && run.closedAtMs === undefined) run.closedAtMs = Date.now() - t0;
      // The handler's own account: it sent after the close whether or not the SDK passed the
      // message on (2.x rejects it, 1.x drops it quietly); neither reaches the client.
      const ok = await send(i).then(() => true, () => false);
      if (closed) run.sentAfterClose++;
      if (closed && ok) run.acceptedAfterClose++;
    }
    run.completedAtMs = Date.now() - t0;
    return `report on ${topic}`;
  };
  const http: Server = o.sdk === '1.x' ? v1Server(o, work) : v2Server(o, work);
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  return {
    port: (http.address() as { port: number }).port,
    runs,
    close: () =>
      new Promise<void>((r) => {
        http.closeAllConnections();
        http.close(() => r());
      }),
  };
}

type Work = (topic: string, isClosed: () => boolean, send: (i: number) => Promise<unknown>) => Promise<string>;

function v1Server(o: StatelessServerOptions, work: Work): Server {
  const fw = o.tracerProvider ? createServerInstrumentation({ tracerProvider: o.tracerProvider, salt: o.salt }) : undefined;
  return createServer((req, res) => {
    void (async () => {
      const mcp = new McpServerV1({ name: 'corpus-stateless-v1', version: '0.1.0' });
      let answered = false;
      let closed = false;
      mcp.registerTool(STATELESS_TOOL, { inputSchema: { topic: z.string() } }, async ({ topic }, extra) => {
        const token = extra._meta?.progressToken;
        const text = await work(topic, () => closed, async (i) => {
          if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: o.steps } });
        });
        answered = true;
        return { content: [{ type: 'text' as const, text }] };
      });
      const raw = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      const transport = fw ? fw.observeTransport(raw) : raw;
      res.on('close', () => {
        closed = !answered;
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
}

function v2Server(o: StatelessServerOptions, work: Work): Server {
  const factory = (): McpServerV2 => {
    const s = new McpServerV2({ name: 'corpus-stateless-v2', version: '0.1.0' });
    s.registerTool(
      STATELESS_TOOL,
      { description: 'a slow report', inputSchema: fromJsonSchema<{ topic: string }>({ type: 'object', properties: { topic: { type: 'string' } } }) },
      async (args, ctx) => {
        const token = ctx.mcpReq._meta?.progressToken;
        // 2026 era: the request's signal fires when its response stream closes.
        const text = await work(args.topic, () => ctx.mcpReq.signal.aborted, async (i) => {
          if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: o.steps } });
        });
        return { content: [{ type: 'text' as const, text }] };
      },
    );
    return s;
  };
  const handler = createMcpHandler(o.tracerProvider ? observeStatelessServers(factory, { tracerProvider: o.tracerProvider }) : factory);
  const http = createServer(toNodeHandler(handler) as never);
  http.once('close', () => void handler.close());
  return http;
}
