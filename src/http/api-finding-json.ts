import type { Finding } from '../model/finding.js';

/** API path prefix of version 1. */
export const API_V1 = '/api/v1';

/** A finding as the API answers it: the stored finding plus relative links to follow. */
export type FindingJson = Finding & { links: { self: string; session: string } };

/** Adds `links.self` and `links.session` (relative URLs) to a finding. */
export function findingJson(f: Finding): FindingJson {
  return {
    ...f,
    links: {
      self: `${API_V1}/findings/${encodeURIComponent(f.id)}`,
      session: `${API_V1}/sessions/${encodeURIComponent(f.sessionKey)}`,
    },
  };
}
