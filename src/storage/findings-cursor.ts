import { createError } from '../errors.js';

/** Position after the last item of a page, in (detected_at_ms DESC, id ASC) order. */
export interface FindingsCursor {
  detectedAtMs: number;
  id: string;
}

/**
 * Opaque to clients (base64url JSON) so the ordering can change without breaking the API
 * contract; keyed on the last item, not an offset, so inserts ahead of it do not shift pages.
 */
export function encodeFindingsCursor(c: FindingsCursor): string {
  return Buffer.from(JSON.stringify([c.detectedAtMs, c.id]), 'utf8').toString('base64url');
}

/** Throws FORKWATCH_ERR_BAD_QUERY when `s` is not a cursor this module produced. */
export function decodeFindingsCursor(s: string): FindingsCursor {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
  } catch {
    throw createError('FORKWATCH_ERR_BAD_QUERY', 'cursor is malformed');
  }
  if (
    !Array.isArray(v) ||
    v.length !== 2 ||
    typeof v[0] !== 'number' ||
    !Number.isSafeInteger(v[0]) ||
    typeof v[1] !== 'string'
  ) {
    throw createError('FORKWATCH_ERR_BAD_QUERY', 'cursor is malformed');
  }
  return { detectedAtMs: v[0], id: v[1] };
}
