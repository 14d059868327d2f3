import { createHash } from 'node:crypto';

/** What the fetch wrappers read of an outgoing request. */
export interface OutgoingRequest {
  method: string;
  /** The caller's own Headers when it passed one (the SDK does): read it, never change it. */
  headers: Headers;
  /** The body when it is a string (the SDK always sends JSON text), else undefined. */
  body: string | undefined;
}

/**
 * Reads method, headers and a string body from fetch arguments without consuming a Request body.
 * Headers are copied only when they are not already a Headers instance (a copy costs microseconds
 * per request, and this runs on every one).
 */
export function readRequest(input: string | URL | Request, init: RequestInit | undefined): OutgoingRequest {
  const isRequest = typeof Request !== 'undefined' && input instanceof Request;
  const method = (init?.method ?? (isRequest ? input.method : 'GET')).toUpperCase();
  const given = init?.headers ?? (isRequest ? input.headers : undefined);
  const headers = given instanceof Headers ? given : new Headers(given);
  const body = typeof init?.body === 'string' ? init.body : undefined;
  return { method, headers, body };
}

/**
 * A session id fit to key state by: ids over `maxChars` are replaced by a digest of themselves,
 * so a hostile multi-megabyte header cannot pin memory in the per-session maps. Compliant servers
 * send short visible-ASCII ids and are keyed unchanged.
 */
export function boundedSessionId(id: string | null | undefined, maxChars: number): string | undefined {
  if (id === null || id === undefined || id === '') return undefined;
  if (id.length <= maxChars) return id;
  return `oversize:${createHash('sha256').update(id, 'utf8').digest('hex')}`;
}

/** Media type essence of a content-type header, lower case. */
export function mediaType(contentType: string | null): string {
  // What servers send nearly always, answered without building three strings per response.
  if (contentType === 'text/event-stream' || contentType === 'application/json') return contentType;
  return (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

/**
 * A Response with `body` in place of the original's, same status and headers. `url` is kept
 * because the SDK names redirect targets from it.
 */
export function withBody(original: Response, body: ReadableStream<Uint8Array>, headers: Headers = original.headers): Response {
  const res = new Response(body, { status: original.status, statusText: original.statusText, headers });
  try {
    Object.defineProperty(res, 'url', { value: original.url });
  } catch {
    // Some runtimes define url non-configurably; the SDK falls back to the request URL.
  }
  return res;
}

/** Statuses whose Response may carry a body (the Response constructor refuses the others). */
export function mayHaveBody(status: number): boolean {
  return status >= 200 && status !== 204 && status !== 205 && status !== 304;
}
