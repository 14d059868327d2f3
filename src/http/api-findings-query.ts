import { createError } from '../errors.js';
import { FORK_KINDS, ORPHANED_PROGRESS_TOKEN, REQUEST_ANOMALY_KINDS, type FindingKind } from '../model/finding.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type ListFindingsQuery } from '../storage/store.js';

/** Every finding kind the `kind` filter accepts. */
export const FINDING_KINDS: readonly FindingKind[] = [...FORK_KINDS, ORPHANED_PROGRESS_TOKEN, ...REQUEST_ANOMALY_KINDS];

/** Longest accepted value of any one query parameter, in characters. */
export const MAX_QUERY_VALUE_LENGTH = 512;

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
const DURATION_PART = /(\d+)(ms|s|m|h|d|w)/g;
const DURATION = /^(\d+(ms|s|m|h|d|w))+$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * Parses `since`: an RFC 3339 timestamp, epoch milliseconds, or a duration back from `nowMs`
 * (`15m`, `2h`, `1h30m`, `7d`). Returns epoch ms; throws FORKWATCH_ERR_BAD_QUERY otherwise.
 */
export function parseSince(value: string, nowMs: number): number {
  const v = value.trim();
  if (/^\d{1,16}$/.test(v)) return Number(v);
  if (RFC3339.test(v)) {
    const t = Date.parse(v.replace(' ', 'T'));
    if (Number.isFinite(t)) return t;
  }
  if (DURATION.test(v)) {
    let ms = 0;
    for (const m of v.matchAll(DURATION_PART)) ms += Number(m[1]) * UNIT_MS[m[2]!]!;
    if (Number.isSafeInteger(ms)) return nowMs - ms;
  }
  throw createError('FORKWATCH_ERR_BAD_QUERY', `since=${JSON.stringify(v.slice(0, 64))} is not an RFC 3339 time, epoch ms, or a duration like 15m`);
}

/**
 * Turns the querystring of `GET /api/v1/findings` (as fastify parsed it: repeated keys become
 * arrays) into a store query. `kind` may repeat and may be a comma list; the others may not
 * repeat. Unknown parameters are ignored. Throws FORKWATCH_ERR_BAD_QUERY on any bad value.
 */
export function parseFindingsQuery(raw: Record<string, unknown>, nowMs: number): ListFindingsQuery {
  const q: ListFindingsQuery = { limit: DEFAULT_PAGE_SIZE };

  if (raw.kind !== undefined) {
    const kinds = new Set<FindingKind>();
    for (const v of asList('kind', raw.kind)) {
      for (const k of v.split(',')) {
        const kind = k.trim();
        if (kind === '') continue;
        if (!(FINDING_KINDS as readonly string[]).includes(kind)) {
          throw createError('FORKWATCH_ERR_BAD_QUERY', `kind=${JSON.stringify(kind.slice(0, 64))}: expected one of ${FINDING_KINDS.join(', ')}`);
        }
        kinds.add(kind as FindingKind);
      }
    }
    if (kinds.size > 0) q.kind = [...kinds];
  }
  const service = single('service', raw.service);
  if (service !== undefined) {
    if (service === '') throw createError('FORKWATCH_ERR_BAD_QUERY', 'service is empty');
    q.service = service;
  }
  const since = single('since', raw.since);
  if (since !== undefined) q.since = parseSince(since, nowMs);
  const limit = single('limit', raw.limit);
  if (limit !== undefined) {
    if (!/^\d{1,4}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_PAGE_SIZE) {
      throw createError('FORKWATCH_ERR_BAD_QUERY', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`);
    }
    q.limit = Number(limit);
  }
  const cursor = single('cursor', raw.cursor);
  if (cursor !== undefined) q.cursor = cursor;
  return q;
}

function asList(name: string, v: unknown): string[] {
  const list = Array.isArray(v) ? v : [v];
  for (const item of list) {
    if (typeof item !== 'string' || item.length > MAX_QUERY_VALUE_LENGTH) {
      throw createError('FORKWATCH_ERR_BAD_QUERY', `${name} is malformed`);
    }
  }
  return list as string[];
}

function single(name: string, v: unknown): string | undefined {
  if (v === undefined) return undefined;
  const list = asList(name, v);
  if (list.length !== 1) throw createError('FORKWATCH_ERR_BAD_QUERY', `${name} given more than once`);
  return list[0];
}
