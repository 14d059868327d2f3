import { parseArgs } from 'node:util';
import { createError } from '../errors.js';
import { CONFIG_BOUNDS, DEFAULT_CONFIG, FOREIGN_FORKWATCH_ENV, LOG_LEVELS, type ConfigKey, type DetectorConfig } from './defaults.js';

const KEYS = Object.keys(DEFAULT_CONFIG) as ConfigKey[];

/** `otlpPort` → `otlp-port`. */
export function flagName(key: ConfigKey): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** `otlpPort` → `FORKWATCH_OTLP_PORT`. */
export function envName(key: ConfigKey): string {
  return `FORKWATCH_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

const BY_FLAG = new Map(KEYS.map((k) => [flagName(k), k]));
const BY_ENV = new Map(KEYS.map((k) => [envName(k), k]));

/** Raw string values by config key, as read from one source. */
export type RawConfig = Partial<Record<ConfigKey, string | boolean | number>>;

/**
 * Reads `FORKWATCH_*` variables. Unknown ones are warned about, not fatal: other tools share the
 * prefix (the instrumentation's `FORKWATCH_SESSION_SALT`, a proxy's settings), and a detector must
 * not refuse to start over a variable meant for another process. The warning names it, so a typo
 * in a manifest is still seen.
 */
export function readEnv(env: NodeJS.ProcessEnv, warnings: string[]): RawConfig {
  const raw: RawConfig = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('FORKWATCH_') || value === undefined || FOREIGN_FORKWATCH_ENV.has(name)) continue;
    const key = BY_ENV.get(name);
    if (!key) warnings.push(`unknown environment variable ${name} ignored (not a detector setting; see forkwatch serve --help)`);
    else raw[key] = value;
  }
  return raw;
}

/** parseArgs' option table, derived from the defaults: booleans are bare flags, the rest take a value. */
const PARSE_OPTIONS = Object.fromEntries(
  KEYS.map((k) => [flagName(k), { type: typeof DEFAULT_CONFIG[k] === 'boolean' ? ('boolean' as const) : ('string' as const) }]),
);

/**
 * Parses `--flag value`, `--flag=value` and bare boolean flags with `node:util` parseArgs. Returns
 * config values and the remaining positional arguments; unknown flags and missing values are
 * problems (collected, not thrown one at a time).
 */
export function readFlags(argv: string[], problems: string[]): { raw: RawConfig; positionals: string[] } {
  const raw: RawConfig = {};
  const positionals: string[] = [];
  const { tokens } = parseArgs({ args: argv, options: PARSE_OPTIONS, strict: false, allowPositionals: true, tokens: true });
  for (const t of tokens) {
    if (t.kind === 'positional') positionals.push(t.value);
    else if (t.kind === 'option-terminator') continue;
    else {
      const key = BY_FLAG.get(t.name);
      if (!key) problems.push(`unknown flag ${t.rawName}`);
      else if (typeof DEFAULT_CONFIG[key] === 'boolean') raw[key] = t.value === undefined ? true : t.value;
      else if (t.value === undefined) problems.push(`${t.rawName} needs a value`);
      else raw[key] = t.value;
    }
  }
  return { raw, positionals };
}

function coerce(key: ConfigKey, value: string | boolean | number, origin: string, problems: string[]): unknown {
  const def = DEFAULT_CONFIG[key];
  if (typeof def === 'boolean') {
    if (typeof value === 'boolean') return value;
    const v = String(value).toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off', ''].includes(v)) return false;
    problems.push(`${origin}: expected a boolean, got ${JSON.stringify(value)}`);
    return undefined;
  }
  if (typeof def === 'number') {
    const n = typeof value === 'number' ? value : String(value).trim() === '' ? NaN : Number(value);
    const bounds = CONFIG_BOUNDS[key];
    if (!Number.isFinite(n)) {
      problems.push(`${origin}: expected a number, got ${JSON.stringify(value)}`);
      return undefined;
    }
    if (bounds && (n < bounds.min || n > bounds.max || (bounds.integer && !Number.isInteger(n)))) {
      problems.push(`${origin}: ${n} is outside ${bounds.min}..${bounds.max}${bounds.integer ? ' (integer)' : ''}`);
      return undefined;
    }
    return n;
  }
  const s = String(value);
  if (key === 'logLevel' && !(LOG_LEVELS as readonly string[]).includes(s)) {
    problems.push(`${origin}: expected one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(s)}`);
    return undefined;
  }
  if (key === 'db' && s === '') {
    problems.push(`${origin}: must be a path or :memory:`);
    return undefined;
  }
  return s;
}

/**
 * Builds the detector's configuration: defaults < env < flags < `overrides` (programmatic). All
 * problems are reported together in one FORKWATCH_ERR_CONFIG_INVALID; unknown `FORKWATCH_*`
 * variables come back as `warnings`.
 */
export function loadConfig(sources: { argv?: string[]; env?: NodeJS.ProcessEnv; overrides?: Record<string, unknown> } = {}): {
  config: DetectorConfig;
  positionals: string[];
  /** Unknown `FORKWATCH_*` variables, to be logged by the caller. */
  warnings: string[];
} {
  const problems: string[] = [];
  const warnings: string[] = [];
  const fromEnv = readEnv(sources.env ?? {}, warnings);
  const { raw: fromFlags, positionals } = readFlags(sources.argv ?? [], problems);
  const config: DetectorConfig = { ...DEFAULT_CONFIG };
  const apply = (raw: RawConfig, origin: (k: ConfigKey) => string): void => {
    for (const key of Object.keys(raw) as ConfigKey[]) {
      const v = coerce(key, raw[key]!, origin(key), problems);
      if (v !== undefined) (config as Record<string, unknown>)[key] = v;
    }
  };
  apply(fromEnv, envName);
  apply(fromFlags, (k) => `--${flagName(k)}`);
  if (sources.overrides) {
    const raw: RawConfig = {};
    for (const [k, v] of Object.entries(sources.overrides)) {
      if (!(k in DEFAULT_CONFIG)) problems.push(`unknown option ${k}`);
      else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') raw[k as ConfigKey] = v;
      else problems.push(`option ${k}: unsupported value type ${typeof v}`);
    }
    apply(raw, (k) => `option ${k}`);
  }
  if (config.maxDecompressedBytes < config.maxBodyBytes) {
    problems.push(`maxDecompressedBytes (${config.maxDecompressedBytes}) must be >= maxBodyBytes (${config.maxBodyBytes})`);
  }
  if (problems.length > 0) throw createError('FORKWATCH_ERR_CONFIG_INVALID', problems.join('; '));
  return { config, positionals, warnings };
}

/** One line per setting for `--help`: flag, env var, default, description comes from docs. */
export function describeSettings(): string[] {
  return KEYS.map((k) => `  --${flagName(k).padEnd(28)} ${envName(k).padEnd(36)} default ${JSON.stringify(DEFAULT_CONFIG[k])}`);
}
