import type { FastifyInstance } from 'fastify';
import { STYLESHEET, STYLESHEET_HASH } from '../stylesheet.js';
import { UI_OPEN_AUTH } from '../ui-auth.js';

/** Browsers ask for an icon on their own: answering it keeps the console free of 404s. */
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d2330"/><path d="M4 3v10M4 8h5l3-5M9 8l3 5" stroke="#fde3e4" stroke-width="2" fill="none"/></svg>`;

/** The stylesheet and icon: open (the sign-in page needs them), cacheable, no data in them. */
export async function assetsRoutes(app: FastifyInstance): Promise<void> {
  app.get('/assets/forkwatch.css', { config: UI_OPEN_AUTH }, async (_req, reply) => {
    reply.header('cache-control', 'public, max-age=3600').header('etag', `"${STYLESHEET_HASH}"`);
    return reply.type('text/css; charset=utf-8').send(STYLESHEET);
  });
  app.get('/assets/favicon.svg', { config: UI_OPEN_AUTH }, async (_req, reply) => {
    reply.header('cache-control', 'public, max-age=86400');
    return reply.type('image/svg+xml').send(FAVICON);
  });
}
