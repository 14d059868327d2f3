import { inTestedRange, TESTED_MCP_SDK_VERSIONS, type McpSdkPackage } from './supported-versions.js';
import { notice } from './notice.js';

/**
 * Whether to patch `pkg` at `version`: inside the tested set, or anywhere with
 * `FORKWATCH_ALLOW_UNTESTED_MCP_SDK=1`. Outside it, one line (once per package and version) says
 * the app runs uninstrumented; with the override, one line says it is patched untested.
 */
export function mayPatch(pkg: McpSdkPackage, version: string | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  const range = TESTED_MCP_SDK_VERSIONS[pkg];
  if (inTestedRange(version, range)) return true;
  const shown = version ?? '(unknown version)';
  if (/^(1|true)$/i.test(env.FORKWATCH_ALLOW_UNTESTED_MCP_SDK ?? '')) {
    notice(`untested:${pkg}@${shown}`, `${pkg} ${shown} is outside the versions this instrumentation is tested with (${range}); instrumented anyway (FORKWATCH_ALLOW_UNTESTED_MCP_SDK=1)`);
    return true;
  }
  notice(
    `untested:${pkg}@${shown}`,
    `${pkg} ${shown} is outside the versions this instrumentation is tested with (${range}): its MCP sessions are NOT instrumented (FORKWATCH_ALLOW_UNTESTED_MCP_SDK=1 instruments it anyway)`,
  );
  return false;
}
