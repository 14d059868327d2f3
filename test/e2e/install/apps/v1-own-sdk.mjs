// An ESM app on the SDK 1.x that starts its own NodeSDK with its own exporter (APP_OTLP_URL) and
// makes a span of its own; no forkwatch code. Run under `--import @forkwatch/instrumentation/register`,
// forkwatch must join this SDK's provider, not take it over.
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { trace } from '@opentelemetry/api';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import core from './echo-core.cjs';

const sdk = new NodeSDK({ traceExporter: new OTLPTraceExporter({ url: `${process.env.APP_OTLP_URL}/v1/traces` }) });
sdk.start();
trace.getTracer('own-app').startSpan('own-app.startup').end();
function newServer() {
  const mcp = new McpServer({ name: 'echo', version: '1.0.0' });
  mcp.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return mcp;
}
try {
  await core.runEcho({ newServer, ServerTransport: StreamableHTTPServerTransport, Client, ClientTransport: StreamableHTTPClientTransport });
} finally {
  await sdk.shutdown();
}
