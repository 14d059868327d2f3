import {
  SPAN_GUARD_FORK,
  SPAN_REQUEST_RECEIVED,
  SPAN_REQUEST_SENT,
  SPAN_REQUEST_SETTLED,
  SPAN_RESUME,
  SPAN_SESSION_CREATED,
  SPAN_SESSION_ENDED,
  SPAN_SSE_EVENT,
} from '@forkwatch/instrumentation/semconv';
import type { EventFact, RequestFact, SessionState, SpanFact, CompactSession } from '../session-state.js';
import { decodeBinarySession } from './binary-session.js';
import { BINARY_STATE_FORMAT } from './format.js';

/**
 * Event fields in the order of their positional encoding (format 2). Events are the bulk of a
 * session's state (up to maxEventsPerIncarnation per side and incarnation): written as arrays they
 * take about half the bytes and serialize several times faster than as keyed objects.
 * Append only: stored states depend on these positions.
 */
const EVENT_FIELDS = [
  'traceId',
  'spanId',
  'side',
  'timeMs',
  'ingestMs',
  'inc',
  'eventId',
  'seq',
  'seqSource',
  'digest',
  'jsonrpcKind',
  'jsonrpcId',
  'method',
  'progressToken',
  'stream',
  'replayed',
  'delivery',
  'seenBefore',
] as const satisfies ReadonlyArray<keyof EventFact>;

/** Value of `v` in a format-2 state (span facts as arrays); format 1 (keyed objects, no `v`) is still read. */
const FORMAT_POSITIONAL = 2;

type EncodedEvent = Array<string | number | boolean | null>;

/**
 * Within one session most events repeat the previous event's incarnation, carry an id of the
 * form `${incarnation}-${seq}` and were ingested at or shortly before the session's last activity:
 * those are written as short markers. Every shortcut is taken only when decoding gives back the
 * exact value.
 */
const SAME_INC = 0;
const ID_IS_INC_SEQ = 0;

function encodeEvent(e: EventFact, prevInc: string | undefined, baseMs: number): EncodedEvent {
  const d = baseMs - e.ingestMs;
  const out: EncodedEvent = [
    e.traceId,
    e.spanId,
    e.side,
    e.timeMs,
    // A delta (number) when exact, else the value itself wrapped as a string.
    baseMs - d === e.ingestMs ? d : String(e.ingestMs),
    e.inc === undefined ? null : e.inc === prevInc ? SAME_INC : e.inc,
    e.inc !== undefined && e.seq !== undefined && e.eventId === `${e.inc}-${e.seq}` ? ID_IS_INC_SEQ : e.eventId,
    e.seq ?? null,
    e.seqSource ?? null,
    e.digest ?? null,
    e.jsonrpcKind ?? null,
    e.jsonrpcId ?? null,
    e.method ?? null,
    e.progressToken ?? null,
    e.stream ?? null,
    e.replayed ?? null,
    e.delivery ?? null,
    e.seenBefore ?? null,
  ];
  // Undefined is written as null; trailing nulls are cut.
  let n = out.length;
  while (n > 0 && out[n - 1] === null) n--;
  out.length = n;
  return out;
}

function decodeEvent(a: unknown, prevInc: string | undefined, baseMs: number): EventFact {
  if (!Array.isArray(a)) throw new TypeError('malformed event');
  const e: Record<string, unknown> = { name: SPAN_SSE_EVENT };
  for (let i = 0; i < EVENT_FIELDS.length && i < a.length; i++) {
    const v: unknown = a[i];
    if (v !== null && v !== undefined) e[EVENT_FIELDS[i]!] = v;
  }
  const ingest = e['ingestMs'];
  e['ingestMs'] = typeof ingest === 'number' ? baseMs - ingest : Number(ingest);
  if (e['inc'] === SAME_INC) e['inc'] = prevInc;
  if (e['eventId'] === ID_IS_INC_SEQ) e['eventId'] = `${String(e['inc'])}-${String(e['seq'])}`;
  if (
    typeof e['eventId'] !== 'string' ||
    (e['side'] !== 'client' && e['side'] !== 'server') ||
    (e['inc'] !== undefined && typeof e['inc'] !== 'string') ||
    !Number.isFinite(e['ingestMs'])
  ) {
    throw new TypeError('malformed event');
  }
  return e as unknown as EventFact;
}

type EncodedFact = [string, string, string, number, number | string, Record<string, unknown>?];

/** Keys of {@link SpanFact}: written positionally, the name implied by the list holding the fact. */
const SPAN_FACT_KEYS = new Set(['traceId', 'spanId', 'side', 'name', 'timeMs', 'ingestMs']);

function encodeFact(f: SpanFact, baseMs: number): EncodedFact {
  const d = baseMs - f.ingestMs;
  const out: EncodedFact = [f.traceId, f.spanId, f.side, f.timeMs, baseMs - d === f.ingestMs ? d : String(f.ingestMs)];
  let rest: Record<string, unknown> | undefined;
  for (const k in f) {
    if (SPAN_FACT_KEYS.has(k)) continue;
    const v = (f as unknown as Record<string, unknown>)[k];
    if (v === undefined) continue;
    (rest ??= {})[k] = v;
  }
  if (rest !== undefined) out.push(rest);
  return out;
}

function decodeFact<T extends SpanFact>(a: unknown, name: string, baseMs: number): T {
  if (!Array.isArray(a) || a.length < 5) throw new TypeError('malformed span fact');
  const [traceId, spanId, side, timeMs, ingest, rest] = a as EncodedFact;
  const ingestMs = typeof ingest === 'number' ? baseMs - ingest : Number(ingest);
  if (typeof traceId !== 'string' || typeof spanId !== 'string' || (side !== 'client' && side !== 'server') || !Number.isFinite(ingestMs)) {
    throw new TypeError('malformed span fact');
  }
  return { ...rest, traceId, spanId, side, name, timeMs, ingestMs } as T;
}

function encodeRequest(r: RequestFact, baseMs: number): Record<string, unknown> {
  const out: Record<string, unknown> = { ...r };
  if (r.sent !== undefined) out['sent'] = encodeFact(r.sent, baseMs);
  if (r.received !== undefined) out['received'] = encodeFact(r.received, baseMs);
  if (r.settled !== undefined) out['settled'] = encodeFact(r.settled, baseMs);
  return out;
}

function decodeRequest(raw: unknown, baseMs: number): RequestFact {
  if (typeof raw !== 'object' || raw === null || typeof (raw as RequestFact).requestId !== 'string') throw new TypeError('malformed request');
  const r = { ...(raw as Record<string, unknown>) } as unknown as RequestFact;
  if (r.sent !== undefined) r.sent = decodeFact(r.sent, SPAN_REQUEST_SENT, baseMs);
  if (r.received !== undefined) r.received = decodeFact(r.received, SPAN_REQUEST_RECEIVED, baseMs);
  if (r.settled !== undefined) r.settled = decodeFact(r.settled, SPAN_REQUEST_SETTLED, baseMs);
  return r;
}

function decodeList<T extends SpanFact>(raw: unknown, name: string, baseMs: number): T[] {
  return Array.isArray(raw) ? raw.map((a) => decodeFact<T>(a, name, baseMs)) : [];
}

/**
 * Format-2 JSON of a session. The engine persists full sessions in the binary format 3
 * (binary-session.ts) and compact ones with this; format 2 is still read, and written here for
 * tools and tests that want text.
 */
export function serializeSession(s: SessionState | CompactSession): string {
  if ('compact' in s) return JSON.stringify(s);
  const ev = new Array<EncodedEvent>(s.events.length);
  let prevInc: string | undefined;
  for (let i = 0; i < s.events.length; i++) {
    const e = s.events[i]!;
    ev[i] = encodeEvent(e, prevInc, s.lastActivityMs);
    prevInc = e.inc;
  }
  const base = s.lastActivityMs;
  const requests: Array<Record<string, unknown>> = [];
  for (const r of s.requests.values()) requests.push(encodeRequest(r, base));
  return JSON.stringify({
    ...s,
    v: FORMAT_POSITIONAL,
    created: s.created.map((f) => encodeFact(f, base)),
    ended: s.ended.map((f) => encodeFact(f, base)),
    events: ev,
    resumes: s.resumes.map((f) => encodeFact(f, base)),
    guardForks: s.guardForks.map((f) => encodeFact(f, base)),
    requests,
  });
}

/**
 * Reads a saved session in any format: binary format 3 (`encodeBinarySession`), or JSON
 * formats 1 and 2 ({@link serializeSession}) as text or as UTF-8 bytes.
 * @throws SyntaxError or TypeError on a malformed state (the caller counts it).
 */
export function deserializeSession(state: string | Uint8Array): SessionState | CompactSession {
  if (typeof state !== 'string') {
    if (state[0] === BINARY_STATE_FORMAT) return decodeBinarySession(state);
    state = Buffer.from(state.buffer, state.byteOffset, state.byteLength).toString('utf8');
  }
  const raw = JSON.parse(state) as Record<string, unknown>;
  if (typeof raw['key'] !== 'string') throw new TypeError('session state without key');
  if (raw['compact'] === true) return raw as unknown as CompactSession;
  let reqs = Array.isArray(raw['requests']) ? (raw['requests'] as RequestFact[]) : [];
  if (raw['v'] === FORMAT_POSITIONAL) {
    const base = raw['lastActivityMs'];
    if (typeof base !== 'number') throw new TypeError('session state without lastActivityMs');
    reqs = reqs.map((r) => decodeRequest(r, base));
    raw['created'] = decodeList(raw['created'], SPAN_SESSION_CREATED, base);
    raw['ended'] = decodeList(raw['ended'], SPAN_SESSION_ENDED, base);
    raw['resumes'] = decodeList(raw['resumes'], SPAN_RESUME, base);
    raw['guardForks'] = decodeList(raw['guardForks'], SPAN_GUARD_FORK, base);
    const events: EventFact[] = [];
    let prevInc: string | undefined;
    for (const a of Array.isArray(raw['events']) ? (raw['events'] as unknown[]) : []) {
      const e = decodeEvent(a, prevInc, base);
      events.push(e);
      prevInc = e.inc;
    }
    raw['events'] = events;
  }
  delete raw['v'];
  const s = raw as unknown as SessionState;
  s.requests = new Map(reqs.map((r) => [r.requestId, r]));
  s.created ??= [];
  s.ended ??= [];
  s.events ??= [];
  s.resumes ??= [];
  s.guardForks ??= [];
  s.droppedEvents ??= {};
  s.eventCounts ??= {};
  s.knownIncarnations ??= {};
  s.emitted ??= {};
  return s;
}
