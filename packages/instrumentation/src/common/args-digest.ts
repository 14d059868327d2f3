import { createHash } from 'node:crypto';

/** Values nested deeper than this are digested as their type only: a hostile body cannot recurse us to death. */
const MAX_DEPTH = 32;

function canonical(v: unknown, depth: number): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (depth > MAX_DEPTH) return Array.isArray(v) ? '[…]' : '{…}';
  if (Array.isArray(v)) return `[${v.map((x) => canonical(x, depth + 1)).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .filter((k) => o[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonical(o[k], depth + 1)}`)
    .join(',')}}`;
}

/**
 * `forkwatch.request.args_digest` (docs/telemetry.md): SHA-256 over the canonical JSON (keys
 * sorted, no whitespace) of a request's `params` without `_meta`, first 16 hex characters. What a
 * re-issue repeats under a new request id.
 */
export function argsDigest(params: unknown): string {
  let p = params;
  if (p !== null && typeof p === 'object' && !Array.isArray(p) && '_meta' in p) {
    const { _meta: _, ...rest } = p as Record<string, unknown>;
    p = rest;
  }
  return createHash('sha256').update(canonical(p ?? {}, 0)).digest('hex').slice(0, 16);
}
