import { isAscii } from 'node:buffer';
import type { SseEvent } from './building-blocks.js';
import { hashHi, idHashBytes } from './id-hash.js';
import { payloadPrint, payloadPrintBytes } from './payload-print.js';

/** An SSE event read straight off a chunk's bytes, with what the session log takes of it. */
export interface ScannedEvent extends SseEvent {
  /** payloadPrint(data), taken from the bytes. */
  print: number;
  /** idHash(id) and its high half, from the bytes (0 when the event has no id). */
  idLo: number;
  idHi: number;
}

const MESSAGE = 'message';
const MESSAGE_BYTES = Buffer.from(MESSAGE);

/**
 * Reads the events of one chunk as bytes, the common case of the sidecar's SSE relay: a chunk of
 * whole events (it ends with a blank line), plain ASCII, LF line ends, at most one `data:` line
 * per event, each event within `maxEventChars`. That is what the SDKs send, one `res.write` per
 * event. The text path (decode, SseParser on the text, payloadPrint and idHash over the strings)
 * was most of the proxy's work per event as deployed (`npm run bench -- sidecar-instructions`):
 * here the lines are found by native passes, the id and data hashed in place (id-hash.ts hashBytes,
 * equal to the strings' hashes), and only the id and data become strings, each its own (no frame
 * behind it, nothing to detach). Returns the events in `out` (cleared first), or false when the
 * chunk is anything else (a CR, a byte past ASCII or NUL, a field line without a colon, a second
 * data line, a chunk that stops inside an event): the caller then reads it as text, which the
 * SseParser's rules were written for, so both paths give the same events. Never throws.
 */
export function scanEvents(chunk: Buffer, maxEventChars: number, out: ScannedEvent[]): boolean {
  out.length = 0;
  const n = chunk.length;
  if (n < 2 || chunk[n - 1] !== 10 || chunk[n - 2] !== 10) return false;
  // Native passes over the chunk (memchr, SIMD): a JS loop over its bytes cost more than the
  // text path it replaces (`npm run bench -- proxy-events`).
  if (!isAscii(chunk) || chunk.indexOf(13) >= 0 || chunk.indexOf(0) >= 0) return false;
  let eventStart = 0;
  let idStart = -1;
  let idEnd = -1;
  let dataStart = -1;
  let dataEnd = -1;
  let typeStart = -1;
  let typeEnd = -1;
  let i = 0;
  while (i < n) {
    // Found: the chunk ends with one.
    const end = chunk.indexOf(10, i);
    if (end === i) {
      // A blank line ends the event: one with an id or a data line is dispatched.
      if (idStart >= 0 || dataStart >= 0) {
        if (i - eventStart > maxEventChars) return false;
        out.push(event(chunk, idStart, idEnd, dataStart, dataEnd, typeStart, typeEnd));
      }
      idStart = idEnd = dataStart = dataEnd = typeStart = typeEnd = -1;
      eventStart = ++i;
      continue;
    }
    // The field name runs to the first colon.
    const first = chunk[i]!;
    let colon = i;
    while (colon < end && chunk[colon] !== 58) colon++;
    if (colon === end) return false;
    const field = colon - i;
    let value = colon + 1;
    if (value < end && chunk[value] === 32) value++;
    if (field === 4 && first === 100 && chunk[i + 1] === 97 && chunk[i + 2] === 116 && chunk[i + 3] === 97) {
      if (dataStart >= 0) return false;
      dataStart = value;
      dataEnd = end;
    } else if (field === 2 && first === 105 && chunk[i + 1] === 100) {
      idStart = value;
      idEnd = end;
    } else if (field === 5 && first === 101 && chunk[i + 1] === 118 && chunk[i + 2] === 101 && chunk[i + 3] === 110 && chunk[i + 4] === 116) {
      typeStart = value;
      typeEnd = end;
    }
    // A comment (field empty) or another field (retry, unknown ones): nothing the proxy reads.
    i = end + 1;
  }
  return true;
}

function event(chunk: Buffer, idStart: number, idEnd: number, dataStart: number, dataEnd: number, typeStart: number, typeEnd: number): ScannedEvent {
  let idLo = 0;
  let idHi = 0;
  if (idStart >= 0) {
    idLo = idHashBytes(chunk, idStart, idEnd);
    idHi = hashHi();
  }
  const hasData = dataStart >= 0;
  // Every field in one literal, `id` too: one hidden class for every event, none added later.
  return {
    id: idStart >= 0 ? chunk.toString('latin1', idStart, idEnd) : undefined,
    event: typeStart < 0 || typeStart === typeEnd ? MESSAGE : isMessage(chunk, typeStart, typeEnd) ? MESSAGE : chunk.toString('latin1', typeStart, typeEnd),
    data: hasData ? chunk.toString('latin1', dataStart, dataEnd) : '',
    frame: undefined,
    dataStart: undefined,
    print: payloadPrintBytes(chunk, hasData ? dataStart : 0, hasData ? dataEnd : 0),
    idLo,
    idHi,
  };
}

function isMessage(chunk: Buffer, start: number, end: number): boolean {
  if (end - start !== MESSAGE_BYTES.length) return false;
  for (let k = 0; k < MESSAGE_BYTES.length; k++) if (chunk[start + k] !== MESSAGE_BYTES[k]) return false;
  return true;
}

/** The event's payloadPrint: taken already when it was read off its bytes. */
export function printOf(ev: SseEvent): number {
  const print = (ev as Partial<ScannedEvent>).print;
  return print !== undefined ? print : payloadPrint(ev.data);
}
