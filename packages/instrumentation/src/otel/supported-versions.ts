/**
 * The MCP SDK releases the instrumentation is tested with, per package: the compatibility run
 * (test/compat/sdk-matrix.sh) and the install test (test/e2e/install/) pass on them. The peer
 * ranges of package.json are wider (the next minor releases install); a version outside the
 * tested set is not patched: one log line says so and the app runs uninstrumented
 * (`FORKWATCH_ALLOW_UNTESTED_MCP_SDK=1` patches it anyway). Keep in step with the README's table.
 */
export const TESTED_MCP_SDK_VERSIONS = {
  '@modelcontextprotocol/sdk': '>=1.30.0 <1.33.0',
  '@modelcontextprotocol/server': '>=2.4.0 <2.5.0',
  '@modelcontextprotocol/client': '>=2.4.0 <2.5.0',
  '@modelcontextprotocol/node': '>=2.1.2 <2.2.0',
} as const;

/** A package the instrumentation patches. */
export type McpSdkPackage = keyof typeof TESTED_MCP_SDK_VERSIONS;

/** The `@modelcontextprotocol/sdk` 1.x versions the zero-code patch applies to (see {@link TESTED_MCP_SDK_VERSIONS}). */
export const SUPPORTED_MCP_SDK_VERSIONS = [TESTED_MCP_SDK_VERSIONS['@modelcontextprotocol/sdk']];

type Triple = [number, number, number];

function parse(version: string): Triple | undefined {
  // `2` and `2.1` (a range's bound) read as 2.0.0 and 2.1.0.
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)] : undefined;
}

function compare(a: Triple, b: Triple): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/**
 * Whether `version` lies in `range`, a `>=A.B.C <X.Y.Z` pair (the form the table and the peer
 * ranges use; a bound may omit its minor and patch).
 * Prereleases of the lower bound are out (2.4.0-beta.1 is not 2.4.0), as in semver.
 */
export function inTestedRange(version: string | undefined, range: string): boolean {
  if (version === undefined) return false;
  const v = parse(version);
  const m = /^>=(\S+)\s+<(\S+)$/.exec(range);
  if (!v || !m) return false;
  const lo = parse(m[1]!);
  const hi = parse(m[2]!);
  if (!lo || !hi) return false;
  if (version.includes('-') && compare(v, lo) === 0) return false;
  return compare(v, lo) >= 0 && compare(v, hi) < 0;
}

/** Files of the SDK 1.x the patch hooks, for its ESM build (import-in-the-middle). */
export const SDK_FILES = {
  serverTransport: ['dist/esm/server/streamableHttp.js'],
  clientTransport: ['dist/esm/client/streamableHttp.js'],
  client: ['dist/esm/client/index.js'],
} as const;

/**
 * The CommonJS ids of the SDK 1.x files, as an app requires them (its `exports` map) and as the SDK
 * requires them itself (require-in-the-middle's name for a file inside the package: its path with
`.js` and a trailing `/index` dropped). The SDK maps `"."` to a CommonJS
 * file it does not ship, so require-in-the-middle cannot find the package's root and must be given
 * these exact names.
 */
export const SDK_CJS_IDS = {
  serverTransport: ['@modelcontextprotocol/sdk/server/streamableHttp.js', '@modelcontextprotocol/sdk/dist/cjs/server/streamableHttp'],
  clientTransport: ['@modelcontextprotocol/sdk/client/streamableHttp.js', '@modelcontextprotocol/sdk/dist/cjs/client/streamableHttp'],
  client: ['@modelcontextprotocol/sdk/client/index.js', '@modelcontextprotocol/sdk/client', '@modelcontextprotocol/sdk/dist/cjs/client'],
} as const;

/** The ESM files the patch hooks, 1.x and 2.x, as the loader's `include` pattern (matched against resolved file URLs). */
export const ESM_SDK_FILES =
  /\/@modelcontextprotocol\/(sdk\/dist\/esm\/(server\/streamableHttp|client\/streamableHttp|client\/index)\.js|(server|client|node)\/dist\/index\.mjs)$/;
