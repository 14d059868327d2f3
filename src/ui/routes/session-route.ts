import type { FastifyInstance } from 'fastify';
import { sessionAnswer } from '../../http/session-answer.js';
import { uiSessionPath } from '../ui-paths.js';
import { UI_PAGE_AUTH } from '../ui-auth.js';
import type { UiOptions } from '../ui-options.js';
import { renderErrorPage } from '../views/error-view.js';
import { renderSessionPage } from '../views/session-view.js';

/** Longest session key accepted from the "open a session" form, in characters. */
const MAX_KEY_LENGTH = 256;

/** `GET /ui/sessions/:key` (the timeline) and `GET /ui/sessions?key=` (the form's target). */
export async function sessionRoutes(app: FastifyInstance, opts: UiOptions & { signedIn: boolean }): Promise<void> {
  const now = opts.now ?? Date.now;
  app.get('/sessions', { config: UI_PAGE_AUTH }, async (req, reply) => {
    const key = (req.query as Record<string, unknown>).key;
    if (typeof key !== 'string' || key.trim() === '' || key.length > MAX_KEY_LENGTH) {
      return reply.code(400).type('text/html; charset=utf-8').send(renderErrorPage(400, 'Give one session key (forkwatch.session.key).').value);
    }
    return reply.code(303).header('location', uiSessionPath(key.trim())).send();
  });

  app.get<{ Params: { key: string } }>('/sessions/:key', { config: UI_PAGE_AUTH }, async (req, reply) => {
    reply.type('text/html; charset=utf-8');
    const key = req.params.key;
    const answer = sessionAnswer(key, opts.lineage, opts.store);
    if (!answer) return reply.code(404).send(renderErrorPage(404, `The detector knows no session ${JSON.stringify(key.slice(0, 64))}.`).value);
    return reply.send(renderSessionPage({ lineage: answer.lineage, findings: answer.findings, nowMs: now(), signedIn: opts.signedIn }).value);
  });
}
