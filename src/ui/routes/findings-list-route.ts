import type { FastifyInstance } from 'fastify';
import { ForkwatchError } from '../../errors.js';
import { FINDING_KINDS, parseFindingsQuery } from '../../http/api-findings-query.js';
import type { FindingsPage } from '../../storage/store.js';
import type { ListFilters } from '../ui-paths.js';
import { UI_PAGE_AUTH } from '../ui-auth.js';
import { UI_PAGE_SIZE, type UiOptions } from '../ui-options.js';
import { renderFindingsList } from '../views/findings-list-view.js';

function text(v: unknown): string | undefined {
  if (typeof v === 'string') return v === '' ? undefined : v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.join(',') || undefined;
  return undefined;
}

/** `GET /ui/`: the findings list, with the API's own query parsing (the same filters, the same errors). */
export async function findingsListRoutes(app: FastifyInstance, opts: UiOptions & { signedIn: boolean }): Promise<void> {
  const now = opts.now ?? Date.now;
  // Only /ui/ itself: /ui redirects here, so relative links resolve the same way.
  app.get('/', { prefixTrailingSlash: 'slash', config: UI_PAGE_AUTH }, async (req, reply) => {
    const raw = req.query as Record<string, unknown>;
    const filters: ListFilters = {};
    for (const name of ['kind', 'service', 'since', 'cursor'] as const) {
      const v = text(raw[name]);
      if (v !== undefined) filters[name] = v;
    }
    const nowMs = now();
    let page: FindingsPage = { items: [] };
    let error: string | undefined;
    try {
      // Empty form fields mean "no filter": only the non-empty ones reach the API parser.
      const query = parseFindingsQuery({ ...filters }, nowMs);
      query.limit = UI_PAGE_SIZE;
      page = opts.store.listFindings(query);
    } catch (err) {
      if (!(err instanceof ForkwatchError) || err.statusCode !== 400) throw err;
      error = err.message;
      reply.code(400);
    }
    const view = { items: page.items, filters, kinds: FINDING_KINDS, nowMs, signedIn: opts.signedIn };
    return reply.type('text/html; charset=utf-8').send(
      renderFindingsList({ ...view, ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}), ...(error !== undefined ? { error } : {}) }).value,
    );
  });
}
