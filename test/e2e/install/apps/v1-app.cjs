// A CommonJS MCP app on the SDK 1.x with no forkwatch code: zero code (`--require`/`--import`
// @forkwatch/instrumentation/register), and the base of v1-nodesdk.cjs.
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { z } = require('zod');
const { runEcho } = require('./echo-core.cjs');

function newServer() {
  const mcp = new McpServer({ name: 'echo', version: '1.0.0' });
  mcp.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return mcp;
}

const main = () => runEcho({ newServer, ServerTransport: StreamableHTTPServerTransport, Client, ClientTransport: StreamableHTTPClientTransport });
module.exports = { main };
if (require.main === module) main();
