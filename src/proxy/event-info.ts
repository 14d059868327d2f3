import { DEFAULT_MAX_PARSE_CHARS, describeText, MessageScanner, type JsonRpcInfo } from './building-blocks.js';

/** What data that is no JSON-RPC message (empty, malformed) describes. */
export const NO_MESSAGE: JsonRpcInfo = { kind: 'none' };
const NO_INFO: readonly JsonRpcInfo[] = [NO_MESSAGE];

const scanner = new MessageScanner(DEFAULT_MAX_PARSE_CHARS, true);
const scanned: readonly JsonRpcInfo[] = [scanner];

/**
 * What the exchange needs of one SSE event's data (kind, id, method, progress token), read
 * without building the message: JSON.parse of every event that passed was a large part of the
 * proxy's per-event cost (`npm run bench -- sidecar`, node --cpu-prof). The instrumentation's
 * scanner reads the top level and `params` in one pass and hands anything it does not read
 * plainly to JSON.parse, so the answer is describeText's (data over DEFAULT_MAX_PARSE_CHARS, 1 MiB:
 * kind `none`). A batch (rare on a stream) is described message by message, as describeText does.
 * The single-message result is one object refilled per call: read it before the next call.
 * `frame` and `start`: where `data` lies in the flat text it was cut from (SseEvent.frame), read
 * there in place. Never throws.
 */
export function describeEvent(data: string, frame?: string, start = 0): readonly JsonRpcInfo[] {
  if (data === '') return NO_INFO;
  if (frame === undefined) {
    frame = data;
    start = 0;
  }
  const end = start + data.length;
  if (isBatch(frame, start, end)) return describeText(data);
  scanner.scanRange(frame, start, end);
  return scanned;
}

/** `text[start, end)` is a batch: its first char past whitespace is `[` (found without trimming a copy). */
export function isBatch(text: string, start: number, end: number): boolean {
  let i = start;
  for (let c = text.charCodeAt(i); i < end && (c === 32 || c === 10 || c === 13 || c === 9); c = text.charCodeAt(++i));
  return i < end && text.charCodeAt(i) === 91;
}

/**
 * False only when `data` cannot be a JSON-RPC answer (a response or an error, alone or in a
 * batch): it spells neither `ult"` nor `rror"` (the ends of a `"result"` and an `"error"` key)
 * and has no backslash (an escape may spell one: JSON.parse reads `"res\u0075lt"` as `result`).
 * The exchange must read every answer (the requests it settles); any other event is read only if
 * its span is emitted (event-history.ts). Three indexOf over the data; each looks for its first
 * char with memchr and compares where it finds it, so they look for ends whose first char is
 * rare in other messages: `"result"` itself stopped at every quote, and cost as much as the
 * scan it spares (`npm run bench -- proxy-events`, its describe stage: 52 ns per event against 184
 * with the quoted keys, 2026-12-07). Never throws.
 */
export function mayAnswer(data: string): boolean {
  return data.indexOf('ult"') >= 0 || data.indexOf('rror"') >= 0 || data.indexOf('\\') >= 0;
}
