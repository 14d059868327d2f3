import type { FastifyRequest } from 'fastify';

/**
 * Why a state-changing form post (sign-in, sign-out) is refused as cross-site, or undefined when
 * it may proceed. A browser marks every cross-origin POST with `Origin` (and modern ones with
 * `Sec-Fetch-Site`); a page of another site posting to `/ui/login` could otherwise sign the
 * operator out or spend the address's wrong-token allowance. Requests with neither header (curl,
 * scripts) are not from a browser page and pass. `X-Forwarded-Host` counts as this host too (a
 * reverse proxy in front rewrites `Host`; a cross-site form cannot set that header).
 */
export function crossSiteReason(req: FastifyRequest): string | undefined {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') return `Sec-Fetch-Site: ${site}`;
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  if (typeof origin !== 'string' || origin === 'null') return 'Origin: null';
  let host: string;
  try {
    host = new URL(origin).host.toLowerCase();
  } catch {
    return 'Origin is not a URL';
  }
  const own = [req.headers.host, req.headers['x-forwarded-host']].filter((h): h is string => typeof h === 'string').map((h) => h.toLowerCase());
  return own.includes(host) ? undefined : `Origin ${JSON.stringify(origin.slice(0, 100))} is not this host`;
}
