import type { FastifyReply } from 'fastify';

/**
 * Content-Security-Policy of every /ui answer: nothing loads but the same-origin stylesheet and
 * icon; no script at all; forms post only here; never framed.
 */
export const UI_CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** Sets the CSP and the other hardening headers; pages are never cached (they hold live data). */
export function setSecurityHeaders(reply: FastifyReply, cacheable: boolean): void {
  reply.header('content-security-policy', UI_CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('x-frame-options', 'DENY');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('cross-origin-opener-policy', 'same-origin');
  reply.header('cross-origin-resource-policy', 'same-origin');
  if (!cacheable) reply.header('cache-control', 'no-store');
}
