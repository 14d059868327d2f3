/**
 * The demo's MCP SDK seams filled with the real SDK 2.x packages (@modelcontextprotocol/server,
 * /node, /client), so the seed's scenario runs against 2.x servers and clients.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { McpServer, fromJsonSchema, isInitializeRequest } from '@modelcontextprotocol/server';
import { connectGuarded } from '@forkwatch/instrumentation/client/v2';
import { createSessionGuard } from '@forkwatch/instrumentation/server/v2';
import type { ClientSdkKit, DemoApp, ServerSdkKit } from '../../../src/demo/sdk-kit.js';
import { SLOW_REPORT_TOOL, type SlowReportOptions, type ToolRun } from '../../../src/demo/slow-report-tool.js';

/** The demo's slow tool on a 2.x McpServer (same behaviour as src/demo/slow-report-tool.ts). */
export function createSlowReportServerV2(opts: SlowReportOptions = {}): McpServer {
  const steps = opts.steps ?? 5;
  const stepMs = opts.stepMs ?? 30;
  const server = new McpServer({ name: 'forkwatch-demo-server-v2', version: '0.1.0' });
  let n = 0;
  server.registerTool(
    SLOW_REPORT_TOOL,
    {
      description: 'Builds a report slowly, reporting progress at each step.',
      inputSchema: fromJsonSchema<{ topic?: string }>({ type: 'object', properties: { topic: { type: 'string' } } }),
    },
    async (args, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      const run: ToolRun = {
        sessionId: ctx.sessionId,
        life: opts.life ?? 1,
        requestId: String(ctx.mcpReq.id),
        progressToken: token === undefined ? undefined : String(token),
        progressSent: 0,
        startedAt: Date.now(),
      };
      opts.onRun?.(run);
      for (let i = 1; i <= steps; i++) {
        await delay(stepMs);
        if (token !== undefined) {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } });
          run.progressSent++;
        }
      }
      await delay(stepMs);
      run.resultText = `report ${args.topic ?? 'default'} #${++n} (session ${(run.sessionId ?? 'none').slice(0, 8)}, life ${run.life}, request ${run.requestId})`;
      run.finishedAt = Date.now();
      opts.onRun?.(run);
      return { content: [{ type: 'text' as const, text: run.resultText }] };
    },
  );
  return server;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export const SERVER_SDK_V2: ServerSdkKit = {
  name: '@modelcontextprotocol/server 2.x + @modelcontextprotocol/node',
  createTransport: (o) => new NodeStreamableHTTPServerTransport(o as never) as never,
  createApp: (o) => createSlowReportServerV2(o) as unknown as DemoApp,
  createSessionGuard: (o) => createSessionGuard(o as never),
  isInitializeRequest: (b) => isInitializeRequest(b),
};

export const CLIENT_SDK_V2: ClientSdkKit = {
  name: '@modelcontextprotocol/client 2.x',
  async connectStock(o) {
    const transport = new StreamableHTTPClientTransport(new URL(o.url), { fetch: o.fetch as never, reconnectionOptions: o.reconnection as never });
    const client = new Client(o.info);
    client.onerror = o.onerror;
    o.instr?.attach(transport as never, client as never);
    await client.connect(transport, { timeout: o.timeoutMs });
    return {
      callTool: (call, timeout, onprogress) => client.callTool(call, { timeout, onprogress }),
      close: () => client.close(),
    };
  },
  async connectGuarded(o) {
    const g = await connectGuarded({
      url: o.url,
      clientInfo: o.info,
      transportOptions: { fetch: o.fetch as never, reconnectionOptions: o.reconnection as never },
      instrumentation: o.instr,
      guard: o.guard,
      requestTimeoutMs: o.timeoutMs,
    });
    return {
      callTool: (call, _timeout, onprogress) => g.callTool(call, { onprogress }),
      close: () => g.close(),
    };
  },
};
