import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { SseParser, type SseEvent } from '../common/sse-parser.js';

/** What a tap reports of a response; hooks run after the bytes went out and must not throw. */
export interface ResponseTapHooks {
  /** Status and the headers it was sent with (lower-cased names). */
  onHead?(status: number, header: (name: string) => string | undefined): void;
  /** Each complete SSE event of a `text/event-stream` body. */
  onSseEvent?(event: SseEvent): void;
  /** A hook threw; the response is unaffected. */
  onHookError?(err: unknown): void;
}

/** Reads header `name` out of writeHead's optional headers argument (object or raw array). */
function fromWriteHeadArgs(args: unknown[], name: string): string | undefined {
  for (const a of args) {
    if (!a || typeof a !== 'object') continue;
    if (Array.isArray(a)) {
      // Raw form: [k, v, k, v] or [[k, v], ...].
      if (Array.isArray(a[0])) {
        for (const pair of a as unknown[][]) if (String(pair[0]).toLowerCase() === name) return String(pair[1]);
      } else {
        for (let i = 0; i + 1 < a.length; i += 2) if (String(a[i]).toLowerCase() === name) return String(a[i + 1]);
      }
      continue;
    }
    for (const k of Object.keys(a as OutgoingHttpHeaders)) {
      if (k.toLowerCase() === name) {
        const v = (a as OutgoingHttpHeaders)[k];
        return Array.isArray(v) ? v.join(', ') : v === undefined ? undefined : String(v);
      }
    }
  }
  return undefined;
}

/**
 * Taps `res` in place: learns the status and headers at writeHead, and parses the body when it is
 * `text/event-stream`. Every call goes through to the original with the same arguments; parsing
 * happens after, on a copy, bounded by `maxEventChars`.
 *
 * This runs on every request: the wrappers pass `arguments` straight through (no rest arrays),
 * catch inline (no closure per call), and build the header reader only when a hook asks for it.
 */
export function tapResponse(res: ServerResponse, hooks: ResponseTapHooks, maxEventChars?: number): void {
  let parser: SseParser | undefined;
  let decoder: StringDecoder | undefined;
  const origWriteHead = res.writeHead as (...a: unknown[]) => ServerResponse;
  const origWrite = res.write as (...a: unknown[]) => boolean;
  const origEnd = res.end as (...a: unknown[]) => ServerResponse;

  const failed = (err: unknown): void => {
    try {
      hooks.onHookError?.(err);
    } catch {
      // nothing left to tell
    }
  };

  const feed = (chunk: unknown, encoding: unknown): void => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    let text: string;
    if (typeof chunk === 'string' && decoder === undefined && (typeof encoding !== 'string' || encoding === 'utf8' || encoding === 'utf-8')) {
      // A UTF-8 string while no byte chunk came before (nothing half-decoded): its text is the
      // string itself. What SDK servers write; encoding it to bytes and back was pure cost.
      text = chunk;
    } else {
      let bytes: Uint8Array;
      if (typeof chunk === 'string') {
        // Through the same decoder as byte chunks: a write may end inside a multi-byte character.
        bytes = Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
      } else if (chunk instanceof Uint8Array) {
        // The decoder reads any Uint8Array (what the SDK's web-standard servers write, one per
        // SSE event): a Buffer made over it per write was an object and a native call for nothing.
        bytes = chunk;
      } else {
        return;
      }
      decoder ??= new StringDecoder('utf8');
      text = decoder.write(bytes);
    }
    const events = parser!.push(text);
    for (let i = 0; i < events.length; i++) {
      try {
        hooks.onSseEvent!(events[i]!);
      } catch (err) {
        failed(err);
      }
    }
  };

  const head = (args: IArguments): void => {
    const status = typeof args[0] === 'number' ? args[0] : res.statusCode;
    const header = (name: string): string | undefined => {
      const v = fromWriteHeadArgs(Array.prototype.slice.call(args, 1), name) ?? res.getHeader(name);
      if (v === undefined) return undefined;
      return Array.isArray(v) ? v.join(', ') : String(v);
    };
    if (hooks.onSseEvent) {
      const ct = header('content-type');
      if (ct && ct.toLowerCase().includes('text/event-stream')) parser = new SseParser(maxEventChars);
    }
    hooks.onHead?.(status, header);
  };

  res.writeHead = function writeHead(this: ServerResponse) {
    // eslint-disable-next-line prefer-rest-params
    const out = origWriteHead.apply(this, arguments as unknown as unknown[]);
    try {
      // eslint-disable-next-line prefer-rest-params
      head(arguments);
    } catch (err) {
      failed(err);
    }
    return out;
  } as typeof res.writeHead;

  // Without an SSE hook the body is never looked at: leave write/end alone.
  if (!hooks.onSseEvent) return;

  res.write = function write(this: ServerResponse, chunk: unknown, encoding?: unknown) {
    // eslint-disable-next-line prefer-rest-params
    const out = origWrite.apply(this, arguments as unknown as unknown[]);
    if (parser) {
      try {
        feed(chunk, encoding);
      } catch (err) {
        failed(err);
      }
    }
    return out;
  } as typeof res.write;

  res.end = function end(this: ServerResponse, chunk?: unknown, encoding?: unknown) {
    // eslint-disable-next-line prefer-rest-params
    const out = origEnd.apply(this, arguments as unknown as unknown[]);
    if (parser) {
      try {
        feed(chunk, encoding);
      } catch (err) {
        failed(err);
      }
    }
    return out;
  } as typeof res.end;
}
