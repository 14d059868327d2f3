/** What `/register` takes from the environment, besides the `OTEL_*` variables NodeSDK reads. */
export interface RegisterEnv {
  options: { recordRawSessionId?: boolean };
  warnings: string[];
}

/**
 * Reads `FORKWATCH_RECORD_RAW_SESSION_ID` (`FORKWATCH_SESSION_SALT` is read by the instrumentations
 * themselves) (`1`/`true`); a bad value is
 * warned about and ignored, never fatal: the host app must start whatever we think of its env.
 */
export function readRegisterEnv(env: NodeJS.ProcessEnv): RegisterEnv {
  const options: RegisterEnv['options'] = {};
  const warnings: string[] = [];
  const raw = env.FORKWATCH_RECORD_RAW_SESSION_ID;
  if (raw !== undefined) {
    if (/^(1|true)$/i.test(raw)) options.recordRawSessionId = true;
    else if (/^(0|false|)$/i.test(raw)) options.recordRawSessionId = false;
    else warnings.push(`forkwatch: FORKWATCH_RECORD_RAW_SESSION_ID=${JSON.stringify(raw.slice(0, 40))} is not 1/true/0/false: ignored`);
  }
  return { options, warnings };
}
