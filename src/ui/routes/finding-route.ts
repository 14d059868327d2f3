import type { FastifyInstance } from 'fastify';
import { lineageFromFindings } from '../../http/api-stored-lineage.js';
import { UI_PAGE_AUTH } from '../ui-auth.js';
import type { UiOptions } from '../ui-options.js';
import { renderErrorPage } from '../views/error-view.js';
import { renderFindingPage } from '../views/finding-view.js';

/** `GET /ui/findings/:id`: one finding, what to do, its evidence, its session's timeline. */
export async function findingRoutes(app: FastifyInstance, opts: UiOptions & { signedIn: boolean }): Promise<void> {
  const now = opts.now ?? Date.now;
  app.get<{ Params: { id: string } }>('/findings/:id', { config: UI_PAGE_AUTH }, async (req, reply) => {
    reply.type('text/html; charset=utf-8');
    const finding = opts.store.getFinding(req.params.id);
    if (!finding) return reply.code(404).send(renderErrorPage(404, `No finding ${JSON.stringify(req.params.id.slice(0, 64))}.`).value);
    const sessionFindings = opts.store.findingsForSession(finding.sessionKey);
    const live = opts.lineage(finding.sessionKey);
    const lineage = live ? { ...live, source: 'live' } : sessionFindings.length > 0 ? { ...lineageFromFindings(finding.sessionKey, sessionFindings), source: 'stored' } : undefined;
    return reply.send(
      renderFindingPage({ finding, sessionFindings, nowMs: now(), signedIn: opts.signedIn, ...(lineage ? { lineage } : {}) }).value,
    );
  });
}
