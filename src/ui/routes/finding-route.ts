import type { FastifyInstance } from 'fastify';
import { sessionAnswer } from '../../http/session-answer.js';
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
    const answer = sessionAnswer(finding.sessionKey, opts.lineage, opts.store);
    const sessionFindings = answer?.findings ?? [finding];
    return reply.send(
      renderFindingPage({ finding, sessionFindings, nowMs: now(), signedIn: opts.signedIn, ...(answer ? { lineage: answer.lineage } : {}) }).value,
    );
  });
}
