/** One parsed SSE event. */
export interface SseEvent {
  /** The `id:` field, or undefined when the event had none. */
  id?: string;
  /** The `event:` field, default `message`. */
  event: string;
  /** Data lines joined by `\n`. */
  data: string;
}

/** What push returns when nothing completed; never mutated. */
const NO_EVENTS: readonly SseEvent[] = Object.freeze([]);

/** Largest event (bytes of buffered text) the parser keeps; a larger one is skipped, not buffered. Default 1 MiB. */
export const DEFAULT_MAX_EVENT_CHARS = 1024 * 1024;

/**
 * Incremental parser of the text/event-stream format (WHATWG HTML, "event stream interpretation").
 * Bounded: an event larger than `maxEventChars` is discarded and counted instead of buffered, so a
 * hostile stream cannot grow memory. Never throws.
 */
export class SseParser {
  private buf = '';
  /** Chunks that continue the unfinished line in `buf`, not yet joined to it. */
  private pending: string[] = [];
  private pendingChars = 0;
  private id: string | undefined;
  private event = '';
  private data: string[] = [];
  private dataChars = 0;
  private skipping = false;
  /** Events discarded for exceeding the size bound. */
  oversized = 0;

  /**
   * @param maxEventChars size bound of one event
   * @param idsOnly complete only events that carry an `id:` (what the client records): the others,
   *   most events of servers without an event store, are dropped without being assembled
   */
  constructor(
    private readonly maxEventChars = DEFAULT_MAX_EVENT_CHARS,
    private readonly idsOnly = false,
  ) {}

  /** Feeds a chunk of text; returns the events it completed (a shared empty array when none). */
  push(chunk: string): readonly SseEvent[] {
    if (this.idsOnly && this.idFree(chunk)) return NO_EVENTS;
    if (this.buf.length > 0 && this.buf.charCodeAt(this.buf.length - 1) !== 13 && chunk.indexOf('\n') < 0 && chunk.indexOf('\r') < 0) {
      // Still inside one line: its pieces are listed and joined once, when its end comes (a
      // concatenation and a rescan per chunk made a long line cost its length squared).
      this.pending.push(chunk);
      this.pendingChars += chunk.length;
      if (this.buf.length + this.pendingChars > this.maxEventChars) {
        this.buf = '';
        this.pending = [];
        this.pendingChars = 0;
        this.beginSkip();
      }
      return NO_EVENTS;
    }
    if (this.pendingChars > 0) {
      chunk = this.pending.join('') + chunk;
      this.pending = [];
      this.pendingChars = 0;
    }
    const out: SseEvent[] = [];
    this.buf += chunk;
    let start = 0;
    for (;;) {
      const nl = this.nextLineEnd(start);
      if (nl < 0) break;
      const line = this.buf.slice(start, nl);
      start = nl + (this.buf[nl] === '\r' && this.buf[nl + 1] === '\n' ? 2 : 1);
      this.line(line, out);
    }
    this.buf = this.buf.slice(start);
    if (this.buf.length > this.maxEventChars) {
      // A single unterminated line past the bound: drop it and the event it belongs to.
      this.buf = '';
      this.beginSkip();
    }
    return out;
  }

  /**
   * True when `chunk` can be passed over whole: no event is under way, it ends with a blank line
   * (whole events only), no line of it starts with `id`, and it is too short to hold an oversized
   * event. A server without an event store sends nothing else, one such chunk per answer.
   */
  private idFree(chunk: string): boolean {
    return (
      this.buf.length === 0 &&
      this.data.length === 0 &&
      this.id === undefined &&
      this.event === '' &&
      !this.skipping &&
      chunk.length * 2 < this.maxEventChars &&
      chunk.endsWith('\n\n') &&
      !chunk.startsWith('id') &&
      !chunk.includes('\nid') &&
      !chunk.includes('\rid')
    );
  }

  private nextLineEnd(from: number): number {
    for (let i = from; i < this.buf.length; i++) {
      const c = this.buf.charCodeAt(i);
      if (c === 10) return i;
      if (c === 13) {
        // A lone CR at the end of the buffer may be the first half of CRLF: wait for more.
        if (i + 1 >= this.buf.length) return -1;
        return i;
      }
    }
    return -1;
  }

  private beginSkip(): void {
    this.skipping = true;
    this.oversized++;
    this.data = [];
    this.dataChars = 0;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (!this.skipping && (this.id !== undefined || (this.data.length > 0 && !this.idsOnly))) {
        const ev: SseEvent = { event: this.event || 'message', data: this.data.join('\n') };
        if (this.id !== undefined) ev.id = this.id;
        out.push(ev);
      }
      this.id = undefined;
      this.event = '';
      if (this.data.length > 0) this.data = [];
      this.dataChars = 0;
      this.skipping = false;
      return;
    }
    if (this.skipping || line.charCodeAt(0) === 58 /* ':' comment */) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case 'data':
        this.dataChars += value.length + 1;
        if (this.dataChars > this.maxEventChars) {
          this.beginSkip();
          return;
        }
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.id = value;
        break;
      case 'event':
        this.event = value;
        break;
      default:
        break;
    }
  }
}
