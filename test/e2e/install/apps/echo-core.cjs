// The scratch apps' MCP part, shared by every app kind of test/e2e/install/: a real MCP server
// (sessionful: one transport per session; or stateless: the app's own request handler) on an
// HTTP port of its own, and a real client that connects over HTTP, calls the `echo` tool and
// closes. The SDK classes come from the app (1.x or 2.x, CommonJS or ESM), so this file imports
// no SDK itself. `explicit` holds the forkwatch calls of an explicit app; zero-code apps pass none.
const http = require('node:http');
const { randomUUID } = require('node:crypto');

/**
 * @param {object} o
 * @param {() => object} o.newServer a McpServer with the `echo` tool registered
 * @param {new (opts: object) => any} [o.ServerTransport] sessionful: the Streamable HTTP server transport class
 * @param {(req: any, res: any) => unknown} [o.handler] stateless: the app's own Node request handler
 * @param {new (info: object, opts?: object) => any} o.Client
 * @param {new (url: URL, opts?: object) => any} o.ClientTransport
 * @param {object} [o.clientOptions] the Client's options
 * @param {{ observe?: (t: any) => void, wrapFetch?: (f: typeof fetch) => typeof fetch, attach?: (t: any, c: any) => void }} [o.explicit]
 */
async function runEcho(o) {
  const explicit = o.explicit ?? {};
  const transports = new Map();
  const handler =
    o.handler ??
    (async (req, res) => {
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
      if (!transport) {
        transport = new o.ServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => transports.set(id, transport) });
        explicit.observe?.(transport);
        await o.newServer().connect(transport);
      }
      await transport.handleRequest(req, res);
    });
  const server = http.createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((err) => {
      console.error('handler failed', err);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = new URL(`http://127.0.0.1:${server.address().port}/mcp`);
  try {
    const fetchFn = explicit.wrapFetch ? explicit.wrapFetch(globalThis.fetch) : undefined;
    const transport = new o.ClientTransport(url, fetchFn ? { fetch: fetchFn } : undefined);
    const client = new o.Client({ name: 'install-test-client', version: '1.0.0' }, o.clientOptions);
    explicit.attach?.(transport, client);
    await client.connect(transport);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hello over http' } });
    console.log(`RESULT ${result.content?.[0]?.text}`);
    await client.close();
  } finally {
    for (const t of transports.values()) await t.close?.().catch(() => {});
    server.closeAllConnections?.();
    await new Promise((r) => server.close(r));
  }
}

module.exports = { runEcho };
