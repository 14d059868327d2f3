/** The fetch signature the MCP SDK's client transport accepts (`opts.fetch`). */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** The headers a fetch call sends, whatever form `init.headers` took. */
export function requestHeaders(input: string | URL | Request, init?: RequestInit): Headers {
  const h = new Headers(input instanceof Request ? input.headers : undefined);
  new Headers(init?.headers).forEach((v, k) => h.set(k, v));
  return h;
}

/** HTTP method of a fetch call. */
export function requestMethod(input: string | URL | Request, init?: RequestInit): string {
  return (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
}
