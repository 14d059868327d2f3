import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPReconnectionOptions } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPServerTransport, type StreamableHTTPServerTransportOptions } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { connectGuarded, type ClientInstrumentation, type ClientGuard } from '@forkwatch/instrumentation/client';
import { createSessionGuard, type SessionGuard, type SessionGuardOptions } from '@forkwatch/instrumentation/server';
import { createSlowReportServer, type SlowReportOptions } from './slow-report-tool.js';
import type { FetchLike } from './fetch-types.js';

/** An MCP server app (one per transport) with the slow tool. */
/** A tool call as the SDKs take it. */
export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface DemoApp {
  connect(transport: never): Promise<void>;
  close(): Promise<void>;
}

/**
 * The server half of an MCP SDK as the demo uses it: 1.x by default; tests pass the 2.x one
 * (test/e2e/helpers/sdk-v2-kit.ts) to run the seed against SDK 2.x servers.
 */
export interface ServerSdkKit {
  name: string;
  /** A Node Streamable HTTP server transport (2.x's has the 1.x surface). */
  createTransport(options: StreamableHTTPServerTransportOptions): StreamableHTTPServerTransport;
  createApp(options: SlowReportOptions): DemoApp;
  createSessionGuard(options: Omit<SessionGuardOptions, 'createServer'> & { createServer: () => DemoApp }): SessionGuard;
  isInitializeRequest(body: unknown): boolean;
}

/** A connected app client: the slow tool call and close. */
export interface KitClient {
  /** Calls `call` (the seed's `slow_report` unless a scenario names another tool). */
  callTool(call: ToolCall, timeoutMs: number, onProgress: () => void): Promise<unknown>;
  close(): Promise<void>;
}

/** The client half of an MCP SDK as the demo uses it. */
export interface ClientSdkKit {
  name: string;
  /** A stock SDK client over `fetch`, instrumented by `instr` when given (attach before connect). */
  connectStock(o: { url: string; fetch: FetchLike; reconnection: StreamableHTTPReconnectionOptions; timeoutMs: number; info: { name: string; version: string }; instr?: ClientInstrumentation; onerror: (err: unknown) => void }): Promise<KitClient>;
  /** forkwatch's connectGuarded for this SDK. */
  connectGuarded(o: { url: string; fetch: FetchLike; reconnection: StreamableHTTPReconnectionOptions; timeoutMs: number; info: { name: string; version: string }; instr?: ClientInstrumentation; guard: ClientGuard }): Promise<KitClient>;
}

export const SERVER_SDK_V1: ServerSdkKit = {
  name: '@modelcontextprotocol/sdk 1.x',
  createTransport: (o) => new StreamableHTTPServerTransport(o),
  createApp: (o) => createSlowReportServer(o) as unknown as DemoApp,
  createSessionGuard: (o) => createSessionGuard(o as unknown as SessionGuardOptions),
  isInitializeRequest: (b) => isInitializeRequest(b),
};

export const CLIENT_SDK_V1: ClientSdkKit = {
  name: '@modelcontextprotocol/sdk 1.x',
  async connectStock(o) {
    const transport = new StreamableHTTPClientTransport(new URL(o.url), { fetch: o.fetch, reconnectionOptions: o.reconnection });
    const client = new Client(o.info);
    client.onerror = o.onerror;
    o.instr?.attach(transport, client);
    await client.connect(transport, { timeout: o.timeoutMs });
    return {
      callTool: (call, timeout, onprogress) => client.callTool(call, undefined, { timeout, onprogress }),
      close: () => client.close(),
    };
  },
  async connectGuarded(o) {
    const g = await connectGuarded({
      url: o.url,
      clientInfo: o.info,
      transportOptions: { fetch: o.fetch, reconnectionOptions: o.reconnection },
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
