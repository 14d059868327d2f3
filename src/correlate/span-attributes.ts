import type { AttrValue } from '../model/span-record.js';
import {
  ATTR_CLIENT_DELIVERY,
  ATTR_CLIENT_SEEN_BEFORE,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GUARDED,
  ATTR_GUARD_FORK_KIND,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_JSONRPC_KIND,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_OBSERVER,
  ATTR_PROGRESS_TOKEN,
  ATTR_REQUEST_OUTCOME,
  ATTR_REQUEST_STREAM_CLOSED,
  ATTR_RESUME_ANSWERED_SESSION_KEY,
  ATTR_RESUME_LAST_EVENT_FOUND,
  ATTR_RESUME_LAST_EVENT_ID,
  ATTR_RESUME_OUTCOME,
  ATTR_RESUME_PREVIOUS_INCARNATION,
  ATTR_SESSION_CLIENT_SUPPLIED_ID,
  ATTR_SESSION_CREATED_BY,
  ATTR_SESSION_END_REASON,
  ATTR_SESSION_EVENTS_EVICTED,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  ATTR_SESSION_KEY,
  ATTR_SIDE,
  ATTR_SSE_EVENT_ID,
  ATTR_SSE_EVENT_SEQ,
  ATTR_SSE_EVENT_SEQ_SOURCE,
  ATTR_SSE_PAYLOAD_DIGEST,
  ATTR_SSE_REPLAYED,
  ATTR_SSE_STREAM_ID,
  SPAN_GUARD_FORK,
  SPAN_REQUEST_RECEIVED,
  SPAN_REQUEST_SENT,
  SPAN_REQUEST_SETTLED,
  SPAN_RESUME,
  SPAN_SESSION_CREATED,
  SPAN_SESSION_ENDED,
  SPAN_SSE_EVENT,
} from '@forkwatch/instrumentation/semconv';

// Slots of the attributes the engine reads; SpanAttributes.v[slot] is the span's value or undefined.
export const A_SIDE = 0;
export const A_SESSION_KEY = 1;
export const A_OBSERVER = 2;
export const A_INC = 3;
export const A_INC_SOURCE = 4;
export const A_CREATED_BY = 5;
export const A_CLIENT_SUPPLIED_ID = 6;
export const A_END_REASON = 7;
export const A_EVENTS_EVICTED = 8;
export const A_EVENT_ID = 9;
export const A_SEQ = 10;
export const A_SEQ_SOURCE = 11;
export const A_DIGEST = 12;
export const A_JSONRPC_KIND = 13;
export const A_JSONRPC_ID = 14;
export const A_METHOD = 15;
export const A_PROGRESS_TOKEN = 16;
export const A_STREAM = 17;
export const A_REPLAYED = 18;
export const A_DELIVERY = 19;
export const A_SEEN_BEFORE = 20;
export const A_LAST_EVENT_ID = 21;
export const A_STATUS = 22;
export const A_PREVIOUS_INC = 23;
export const A_ANSWERED_KEY = 24;
export const A_FOUND = 25;
export const A_RESUME_OUTCOME = 26;
export const A_GUARDED = 27;
export const A_TOOL = 28;
export const A_REQUEST_OUTCOME = 29;
export const A_STREAM_CLOSED = 30;
export const A_FORK_KIND = 31;

/** The key of each slot, in slot order. */
const SLOT_KEYS: readonly string[] = [
  ATTR_SIDE,
  ATTR_SESSION_KEY,
  ATTR_OBSERVER,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  ATTR_SESSION_CREATED_BY,
  ATTR_SESSION_CLIENT_SUPPLIED_ID,
  ATTR_SESSION_END_REASON,
  ATTR_SESSION_EVENTS_EVICTED,
  ATTR_SSE_EVENT_ID,
  ATTR_SSE_EVENT_SEQ,
  ATTR_SSE_EVENT_SEQ_SOURCE,
  ATTR_SSE_PAYLOAD_DIGEST,
  ATTR_JSONRPC_KIND,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_PROGRESS_TOKEN,
  ATTR_SSE_STREAM_ID,
  ATTR_SSE_REPLAYED,
  ATTR_CLIENT_DELIVERY,
  ATTR_CLIENT_SEEN_BEFORE,
  ATTR_RESUME_LAST_EVENT_ID,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_RESUME_PREVIOUS_INCARNATION,
  ATTR_RESUME_ANSWERED_SESSION_KEY,
  ATTR_RESUME_LAST_EVENT_FOUND,
  ATTR_RESUME_OUTCOME,
  ATTR_GUARDED,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_REQUEST_OUTCOME,
  ATTR_REQUEST_STREAM_CLOSED,
  ATTR_GUARD_FORK_KIND,
];
const SLOTS = SLOT_KEYS.length;
const SLOT_OF = new Map(SLOT_KEYS.map((k, i) => [k, i]));
/** Not a key the engine reads. */
const NONE = -1;
/** Attribute positions remembered per span kind; later positions are looked up every time. */
const POSITIONS = 32;
/** Span kinds with a row of remembered positions of their own; every other name shares the last row. */
const KINDS = [SPAN_SSE_EVENT, SPAN_REQUEST_SENT, SPAN_REQUEST_RECEIVED, SPAN_REQUEST_SETTLED, SPAN_SESSION_CREATED, SPAN_SESSION_ENDED, SPAN_RESUME, SPAN_GUARD_FORK];

/**
 * The attributes of one span that the engine reads, in fixed slots ({@link v}, indexed by the
 * `A_*` constants), taken from the span's record in one pass. The engine used to read each
 * attribute by key from the decoded record: records come in dozens of shapes (one per key
 * sequence), so every such read was a megamorphic keyed load (a stub-cache probe each, about a
 * twentieth of the detector's in-process instructions on the wire bench). A `for...in` pass reads
 * each value by its field index whatever the record's shape, and the key's slot comes from the
 * key at the same position in the previous span of the same kind (a pointer compare: property
 * keys are internalized), looked up by key only when it differs. Reused from span to span, so it
 * allocates nothing.
 */
export class SpanAttributes {
  /** The current span's value of each slot, undefined when absent. */
  readonly v: Array<AttrValue | undefined> = new Array<AttrValue | undefined>(SLOTS).fill(undefined);
  /** Slots set for the current span, to clear for the next. */
  private readonly filled = new Int32Array(SLOTS);
  private nFilled = 0;
  /** Per kind row and position: the key last seen there and its slot. */
  private readonly posKey: string[] = new Array<string>((KINDS.length + 1) * POSITIONS).fill('');
  private readonly posSlot = new Int32Array((KINDS.length + 1) * POSITIONS).fill(NONE);

  /** Takes the attributes of a span named `name` from its record `a`. */
  read(name: string, a: Record<string, AttrValue>): void {
    const v = this.v;
    const filled = this.filled;
    for (let i = 0; i < this.nFilled; i++) v[filled[i]!] = undefined;
    let n = 0;
    const posKey = this.posKey;
    const posSlot = this.posSlot;
    let at = kindRow(name) * POSITIONS;
    let left = POSITIONS;
    for (const k in a) {
      let slot: number;
      if (left > 0) {
        left--;
        if (posKey[at] === k) slot = posSlot[at]!;
        else {
          slot = SLOT_OF.get(k) ?? NONE;
          posKey[at] = k;
          posSlot[at] = slot;
        }
        at++;
      } else slot = SLOT_OF.get(k) ?? NONE;
      // A slot is set once per span: an own key occurs once in a record.
      if (slot !== NONE && v[slot] === undefined) {
        v[slot] = a[k];
        filled[n++] = slot;
        // Kept current as it goes: a throw mid-span (a hostile getter) must not leave a slot set.
        this.nFilled = n;
      }
    }
    this.nFilled = n;
  }

  /** A non-empty string value (numbers and booleans as their string), else undefined. */
  str(slot: number): string | undefined {
    const x = this.v[slot];
    if (x === undefined || x === '') return undefined;
    return typeof x === 'string' ? x : String(x);
  }

  /** A finite number, or a string holding one; else undefined. */
  num(slot: number): number | undefined {
    const x = this.v[slot];
    if (typeof x === 'number') return Number.isFinite(x) ? x : undefined;
    if (typeof x === 'string' && x !== '') {
      const n = Number(x);
      return Number.isFinite(n) ? n : undefined;
    }
    return undefined;
  }

  /** A boolean, or the string `true` / `false`; else undefined. */
  bool(slot: number): boolean | undefined {
    const x = this.v[slot];
    if (typeof x === 'boolean') return x;
    if (x === 'true') return true;
    if (x === 'false') return false;
    return undefined;
  }
}

/** The row of remembered positions for spans named `name` (names are the decoders' internalized constants). */
function kindRow(name: string): number {
  for (let i = 0; i < KINDS.length; i++) if (KINDS[i] === name) return i;
  return KINDS.length;
}
