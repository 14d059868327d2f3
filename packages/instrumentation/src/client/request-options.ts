/**
 * Where `client.request()` takes its options, in both SDK lines: 1.x `request(req, schema,
 * options?)`; 2.x `request(req, options?)` for a spec method and `request(req, schema, options?)`
 * with an explicit result schema (a Standard Schema). Read structurally: a schema is an object
 * with `~standard` (Standard Schema, Zod 3.24+/4, 2.x's `fromJsonSchema`) or a `parse`/`safeParse`
 * function (older Zod); request options never carry those.
 */
export function requestOptionsIndex(args: ArrayLike<unknown>): 1 | 2 {
  return isResultSchema(args[1]) ? 2 : 1;
}

/** Whether `x` is a result schema (not request options); see {@link requestOptionsIndex}. */
export function isResultSchema(x: unknown): boolean {
  if (x === null || (typeof x !== 'object' && typeof x !== 'function')) return false;
  const o = x as Record<string, unknown>;
  return '~standard' in o || typeof o.parse === 'function' || typeof o.safeParse === 'function';
}
