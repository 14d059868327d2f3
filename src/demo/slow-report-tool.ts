import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/** Name of the demo's slow tool. */
export const SLOW_REPORT_TOOL = 'slow_report';

/** What the demo servers record of each slow_report run (the server-side truth of the seed). */
export interface ToolRun {
  /** Raw session id the run was served under. */
  sessionId: string | undefined;
  /** Which server-side life of that id served it (1 for the first, 2 after a rehydration, ...). */
  life: number;
  /** JSON-RPC id of the tools/call. */
  requestId: string;
  progressToken: string | undefined;
  progressSent: number;
  startedAt: number;
  /** When the tool handed its result to the SDK (ms since epoch); undefined while running. */
  finishedAt?: number;
  /** The result text, so a test can tell whether the app received this very result. */
  resultText?: string;
}

export interface SlowReportOptions {
  /** Progress notifications per call (when the caller gave a progressToken). Default 5. */
  steps?: number;
  /** Delay before each progress notification and before the result, ms. Default 30. */
  stepMs?: number;
  /** Called when a run starts and again when it finishes (same object, mutated). */
  onRun?: (run: ToolRun) => void;
  /** Which life of the session this server instance is (for ToolRun.life). Default 1. */
  life?: number;
}

/** A new McpServer app with the slow tool registered: one per transport, as the SDK requires. */
export function createSlowReportServer(opts: SlowReportOptions = {}): McpServer {
  const steps = opts.steps ?? 5;
  const stepMs = opts.stepMs ?? 30;
  const server = new McpServer({ name: 'forkwatch-demo-server', version: '0.1.0' });
  let n = 0;
  server.registerTool(
    SLOW_REPORT_TOOL,
    {
      description: 'Builds a report slowly, reporting progress at each step.',
      inputSchema: { topic: z.string().optional() },
    },
    async ({ topic }, extra) => {
      const token = extra._meta?.progressToken;
      const run: ToolRun = {
        sessionId: extra.sessionId,
        life: opts.life ?? 1,
        requestId: String(extra.requestId),
        progressToken: token === undefined ? undefined : String(token),
        progressSent: 0,
        startedAt: Date.now(),
      };
      opts.onRun?.(run);
      for (let i = 1; i <= steps; i++) {
        await delay(stepMs);
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: steps },
          });
          run.progressSent++;
        }
      }
      await delay(stepMs);
      run.resultText = `report ${topic ?? 'default'} #${++n} (session ${(run.sessionId ?? 'none').slice(0, 8)}, life ${run.life}, request ${run.requestId})`;
      run.finishedAt = Date.now();
      opts.onRun?.(run);
      return { content: [{ type: 'text', text: run.resultText }] };
    },
  );
  return server;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
