/**
 * `@forkwatch/instrumentation`: the OpenTelemetry instrumentation class for NodeSDK
 * (`instrumentations: [new McpForkInstrumentation()]`). The explicit APIs are the `/server` and
 * `/client` entry points; `/register` instruments an app with zero code.
 */
export { McpForkInstrumentation } from './otel/mcp-fork-instrumentation.js';
export type { McpForkInstrumentationConfig } from './otel/types.js';
export { SUPPORTED_MCP_SDK_VERSIONS, TESTED_MCP_SDK_VERSIONS } from './otel/supported-versions.js';
export { PACKAGE_NAME, PACKAGE_VERSION } from './version.js';
export { SCHEMA_VERSION } from './semconv.js';
export type { Side } from './semconv.js';
