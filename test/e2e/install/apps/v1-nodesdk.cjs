// A CommonJS app that starts its own NodeSDK with McpForkInstrumentation (require() of the package
// root), before it loads the MCP SDK 1.x.
const { NodeSDK } = require('@opentelemetry/sdk-node');
const { McpForkInstrumentation } = require('@forkwatch/instrumentation');

const sdk = new NodeSDK({ instrumentations: [new McpForkInstrumentation({ serverOptions: { requestSpanDelayMs: 0 }, clientOptions: { requestSpanDelayMs: 0 } })] });
sdk.start();
require('./v1-app.cjs')
  .main()
  .finally(() => sdk.shutdown());
