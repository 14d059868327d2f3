/** Prefix of the incident view on the API port. */
export const UI_PREFIX = '/ui';

/** `/ui/findings/:id` of a finding. */
export function uiFindingPath(id: string): string {
  return `${UI_PREFIX}/findings/${encodeURIComponent(id)}`;
}

/** `/ui/sessions/:key` of a session key. */
export function uiSessionPath(key: string): string {
  return `${UI_PREFIX}/sessions/${encodeURIComponent(key)}`;
}

/** Filters of the findings list, as they appear in its querystring. */
export interface ListFilters {
  kind?: string;
  service?: string;
  since?: string;
  cursor?: string;
}

/** `/ui/?kind=…&service=…` with empty values left out. */
export function uiListPath(filters: ListFilters): string {
  const q = new URLSearchParams();
  for (const name of ['kind', 'service', 'since', 'cursor'] as const) {
    const v = filters[name];
    if (v !== undefined && v !== '') q.set(name, v);
  }
  const s = q.toString();
  return s === '' ? `${UI_PREFIX}/` : `${UI_PREFIX}/?${s}`;
}
