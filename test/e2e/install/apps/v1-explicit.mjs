// An ESM app on the SDK 1.x that starts its own NodeSDK (no instrumentations) and uses the
// explicit API of @forkwatch/instrumentation/server and /client.
import { NodeSDK } from '@opentelemetry/sdk-node';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createServerInstrumentation } from '@forkwatch/instrumentation/server';
import { createClientInstrumentation } from '@forkwatch/instrumentation/client';
import { z } from 'zod';
import core from './echo-core.cjs';

const sdk = new NodeSDK({});
sdk.start();
const serverFw = createServerInstrumentation({ requestSpanDelayMs: 0 });
const clientFw = createClientInstrumentation({ requestSpanDelayMs: 0 });
function newServer() {
  const mcp = new McpServer({ name: 'echo', version: '1.0.0' });
  mcp.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return mcp;
}
try {
  await core.runEcho({
    newServer,
    ServerTransport: StreamableHTTPServerTransport,
    Client,
    ClientTransport: StreamableHTTPClientTransport,
    explicit: { observe: (t) => serverFw.observeTransport(t), wrapFetch: (f) => clientFw.wrapFetch(f), attach: (t, c) => clientFw.attach(t, c) },
  });
} finally {
  serverFw.flush();
  clientFw.flush();
  await sdk.shutdown();
}
