// An ESM app on the SDK 2.x packages alone (@modelcontextprotocol/server, /client, /node; no
// @modelcontextprotocol/sdk in its tree). argv[2]: `sessionful` (a NodeStreamableHTTPServerTransport
// per session) or `stateless` (createMcpHandler). argv[3] `explicit`: the app starts its own NodeSDK
// and uses @forkwatch/instrumentation/server/v2 and /client/v2; otherwise it has no forkwatch code
// (zero code: --import @forkwatch/instrumentation/register).
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import core from './echo-core.cjs';

const [mode, how] = process.argv.slice(2);
if (mode !== 'sessionful' && mode !== 'stateless') throw new Error(`usage: v2-app.mjs sessionful|stateless [explicit]`);

function newServer() {
  const mcp = new McpServer({ name: 'echo-v2', version: '1.0.0' });
  mcp.registerTool('echo', { inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } } }) }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return mcp;
}

let fw;
let sdk;
if (how === 'explicit') {
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  sdk = new NodeSDK({});
  sdk.start();
  const server = await import('@forkwatch/instrumentation/server/v2');
  const client = await import('@forkwatch/instrumentation/client/v2');
  fw = { server, client };
}

try {
  if (mode === 'sessionful') {
    const serverFw = fw?.server.createServerInstrumentation({ requestSpanDelayMs: 0 });
    const clientFw = fw?.client.createClientInstrumentation({ requestSpanDelayMs: 0 });
    await core.runEcho({
      newServer,
      ServerTransport: NodeStreamableHTTPServerTransport,
      Client,
      ClientTransport: StreamableHTTPClientTransport,
      explicit: fw ? { observe: (t) => fw.server.observeTransport(serverFw, t), wrapFetch: (f) => clientFw.wrapFetch(f), attach: (t, c) => clientFw.attach(t, c) } : undefined,
    });
    serverFw?.flush();
    clientFw?.flush();
  } else {
    const factory = fw ? fw.server.observeStatelessServers(newServer, { requestSpanDelayMs: 0 }) : newServer;
    const mcpHandler = createMcpHandler(factory);
    const tap = fw?.client.createStatelessClientTap();
    try {
      await core.runEcho({
        newServer,
        handler: toNodeHandler(mcpHandler),
        Client,
        ClientTransport: StreamableHTTPClientTransport,
        clientOptions: { versionNegotiation: { mode: 'auto' } },
        explicit: tap ? { wrapFetch: (f) => tap.wrapFetch(f) } : undefined,
      });
    } finally {
      await mcpHandler.close?.();
    }
  }
} finally {
  await sdk?.shutdown();
}
