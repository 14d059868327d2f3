/** What `/register` takes from the environment, besides the `OTEL_*` variables NodeSDK reads. */
export interface RegisterEnv {
  options: { recordRawSessionId?: boolean; mcpSemconv?: boolean };
  warnings: string[];
}

/** Boolean variables `/register` reads, and the option each sets on both sides. */
const FLAGS = [
  ['FORKWATCH_RECORD_RAW_SESSION_ID', 'recordRawSessionId'],
  ['FORKWATCH_MCP_SEMCONV', 'mcpSemconv'],
] as const;

/**
 * Reads `FORKWATCH_RECORD_RAW_SESSION_ID` and `FORKWATCH_MCP_SEMCONV` (`1`/`true`/`0`/`false`;
 * `FORKWATCH_SESSION_SALT` is read by the instrumentations themselves). A bad value is warned
 * about and ignored, never fatal: the host app must start whatever we think of its env.
 */
export function readRegisterEnv(env: NodeJS.ProcessEnv): RegisterEnv {
  const options: RegisterEnv['options'] = {};
  const warnings: string[] = [];
  for (const [name, option] of FLAGS) {
    const raw = env[name];
    if (raw === undefined) continue;
    if (/^(1|true)$/i.test(raw)) options[option] = true;
    else if (/^(0|false|)$/i.test(raw)) options[option] = false;
    else warnings.push(`forkwatch: ${name}=${JSON.stringify(raw.slice(0, 40))} is not 1/true/0/false: ignored`);
  }
  return { options, warnings };
}
