/**
 * First byte of a binary (format 3) session state. Formats 1 and 2 are JSON text and start with
 * `{`, so the first byte tells the formats apart.
 */
export const BINARY_STATE_FORMAT = 3;

// Format 3 is what the engine writes on every commit for every session it touched, so it is
// built for writing speed and size (a session of the ingest bench: ~1.3 KB, against ~5 KB of
// format-2 JSON): trace and span ids as raw bytes, a field equal to the previous event's as a
// 2-bit code, presence as bits. Only `emitted` (rare, holds whole findings) stays JSON.
// Append only: states in the field depend on every bit below.

// Session flags.
export const S_STATELESS = 1;
export const S_SERVER_SERVICE = 2;
export const S_CLIENT_SERVICE = 4;
export const S_PENDING = 8;
export const S_BASELINE = 16;
export const S_EMITTED = 32;
export const S_SERVER_OBSERVER = 64;

// Span fact header flags; bits 2..7 belong to the fact kind.
export const F_CLIENT = 1;
export const F_SAME_INGEST = 2;
export const F_SHIFT = 2;

// Event field codes, 2 bits each in one u32, field i at bits 2i.
export const C_NONE = 0;
export const C_SAME = 1; // equal to the previous event's value
export const C_VALUE = 2; // written
export const C_ALT = 3; // a field-specific short form (see each field)
export const EV_INC = 0;
export const EV_ID = 1; // ALT: `${inc}-${seq}`
export const EV_SEQ = 2; // SAME: previous + 1 (not "equal"); ALT: equal to the previous
export const EV_SEQ_SOURCE = 3;
export const EV_DIGEST = 4; // ALT: 16 lowercase hex as 8 bytes
export const EV_KIND = 5;
export const EV_RPC_ID = 6;
export const EV_METHOD = 7;
export const EV_TOKEN = 8;
export const EV_STREAM = 9;
export const EV_DELIVERY = 10;
export const EV_REPLAYED = 11; // NONE, SAME = false, VALUE = true
export const EV_SEEN_BEFORE = 12; // as replayed

// Request presence bits.
export const R_METHOD = 1;
export const R_TOOL = 2;
export const R_TOKEN = 4;
export const R_INC = 8;
export const R_SENT_INC = 16;
export const R_SENT = 32;
export const R_RECEIVED = 64;
export const R_SETTLED = 128;
// A request's fact header bits: sent 1 = guarded; received 1 = inc follows; settled 1 = outcome
// follows, 2 = stream closed (RequestFact.settled.streamClosed).

// Resume presence bits (a varuint after the fact header).
export const RS_STATUS = 1;
export const RS_INC = 2;
export const RS_PREVIOUS_INC = 4;
export const RS_ANSWERED_KEY = 8;
export const RS_FOUND = 16;
export const RS_FOUND_TRUE = 32;
export const RS_OUTCOME = 64;
export const RS_COUNTED = 128;
export const RS_COUNTED_TRUE = 256;
export const RS_GUARDED = 512;
export const RS_GUARDED_TRUE = 1024;
