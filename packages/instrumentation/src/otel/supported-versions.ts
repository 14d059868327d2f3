/**
 * `@modelcontextprotocol/sdk` versions the zero-code patch applies to: the 1.x releases the
 * compatibility run (test/compat) passes, the same range as the package's peer dependency.
 */
export const SUPPORTED_MCP_SDK_VERSIONS = ['>=1.30.0 <2'];

/** Files of the SDK the patch hooks, for its ESM and CommonJS builds. */
export const SDK_FILES = {
  serverTransport: ['dist/esm/server/streamableHttp.js', 'dist/cjs/server/streamableHttp.js'],
  clientTransport: ['dist/esm/client/streamableHttp.js', 'dist/cjs/client/streamableHttp.js'],
  client: ['dist/esm/client/index.js', 'dist/cjs/client/index.js'],
} as const;

/** The ESM files above as the loader's `include` pattern (matched against resolved file URLs). */
export const ESM_SDK_FILES = /\/@modelcontextprotocol\/sdk\/dist\/esm\/(server\/streamableHttp|client\/streamableHttp|client\/index)\.js$/;
