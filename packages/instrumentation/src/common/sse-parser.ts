/** One parsed SSE event. */
export interface SseEvent {
  /** The `id:` field, or undefined when the event had none. */
  id?: string;
  /** The `event:` field, default `message`. */
  event: string;
  /** Data lines joined by `\n`. */
  data: string;
  /**
   * One data line: the flat text it was cut from, `data` being `frame.slice(dataStart, dataStart +
   * data.length)`, so that a reader can read it in place (a slice is a view whose every char read
   * goes through it). Undefined for two data lines or more.
   */
  frame?: string;
  dataStart?: number;
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
  /**
   * The event's data lines joined by `\n` as they come (most events have one line: no array and
   * no join per event), and how many there were (an empty line still counts).
   */
  private data = '';
  /** The text the first data line was cut from, and where (see SseEvent.frame). */
  private dataFrame: string | undefined = undefined;
  private dataStart = 0;
  private dataLines = 0;
  private dataChars = 0;
  private skipping = false;
  /** Index of the next CR in `buf` at or after the last one looked for (`buf.length`: none); -1: not looked for in this buffer. */
  private nextCr = -1;
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

  /** True when no event is under way: nothing carried over, the next chunk starts a new event. */
  get idle(): boolean {
    return this.buf.length === 0 && this.pendingChars === 0 && this.dataLines === 0 && this.id === undefined && this.event === '' && !this.skipping;
  }

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
    // Allocated at the first event completed: most pushes of a multi-chunk event complete none.
    let out: SseEvent[] | undefined;
    this.buf += chunk;
    this.nextCr = -1;
    let start = 0;
    for (;;) {
      const nl = this.nextLineEnd(start);
      if (nl < 0) break;
      const lineStart = start;
      start = nl + (this.buf[nl] === '\r' && this.buf[nl + 1] === '\n' ? 2 : 1);
      out = this.line(lineStart, nl, out);
    }
    this.buf = this.buf.slice(start);
    if (this.buf.length > this.maxEventChars) {
      // A single unterminated line past the bound: drop it and the event it belongs to.
      this.buf = '';
      this.beginSkip();
    }
    return out ?? NO_EVENTS;
  }

  /**
   * True when `chunk` can be passed over whole: no event is under way, it ends with a blank line
   * (whole events only), no line of it starts with `id`, and it is too short to hold an oversized
   * event. A server without an event store sends nothing else, one such chunk per answer.
   */
  private idFree(chunk: string): boolean {
    return (
      this.buf.length === 0 &&
      this.dataLines === 0 &&
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

  /**
   * Index of the first LF or CR at or after `from`, -1 when none (or a CR that ends the buffer).
   * Found by indexOf rather than char by char (an event's data line is most of its text, scanned
   * on both sides); the next CR is looked for once per buffer, not per line (the SDKs send LF only).
   */
  private nextLineEnd(from: number): number {
    const buf = this.buf;
    let cr = this.nextCr;
    if (cr < from) {
      cr = buf.indexOf('\r', from);
      this.nextCr = cr = cr < 0 ? buf.length : cr;
    }
    const lf = buf.indexOf('\n', from);
    if (lf >= 0 && lf < cr) return lf;
    if (cr >= buf.length) return -1;
    // A lone CR at the end of the buffer may be the first half of CRLF: wait for more.
    return cr + 1 >= buf.length ? -1 : cr;
  }

  private beginSkip(): void {
    this.skipping = true;
    this.oversized++;
    this.data = '';
    this.dataFrame = undefined;
    this.dataLines = 0;
    this.dataChars = 0;
  }

  /**
   * The line `buf[start, end)`. Field names are compared in place and only the value is cut out
   * of the buffer: a slice for the line, its field and its value (twice with the space) were
   * four strings per line, three lines per event, on every SSE event of the host.
   */
  private line(start: number, end: number, out: SseEvent[] | undefined): SseEvent[] | undefined {
    const buf = this.buf;
    if (start === end) {
      if (!this.skipping && (this.id !== undefined || (this.dataLines > 0 && !this.idsOnly))) {
        // Every field set in one literal: one hidden class for every event.
        const one = this.dataLines === 1;
        const ev: SseEvent = { event: this.event || 'message', data: this.data, frame: one ? this.dataFrame : undefined, dataStart: one ? this.dataStart : undefined };
        if (this.id !== undefined) ev.id = this.id;
        if (out === undefined) out = [ev];
        else out.push(ev);
      }
      this.id = undefined;
      this.event = '';
      this.data = '';
      this.dataFrame = undefined;
      this.dataLines = 0;
      this.dataChars = 0;
      this.skipping = false;
      return out;
    }
    if (this.skipping || buf.charCodeAt(start) === 58 /* ':' comment */) return out;
    let colon = start;
    while (colon < end && buf.charCodeAt(colon) !== 58) colon++;
    const fieldChars = colon - start;
    let valueStart = colon < end ? colon + 1 : end;
    if (valueStart < end && buf.charCodeAt(valueStart) === 32) valueStart++;
    if (fieldChars === 4 && buf.startsWith('data', start)) {
      this.dataChars += end - valueStart + 1;
      if (this.dataChars > this.maxEventChars) {
        this.beginSkip();
        return out;
      }
      const value = buf.slice(valueStart, end);
      if (this.dataLines++ === 0) {
        this.data = value;
        this.dataFrame = buf;
        this.dataStart = valueStart;
      } else {
        this.data = `${this.data}\n${value}`;
      }
    } else if (fieldChars === 2 && buf.startsWith('id', start)) {
      const value = buf.slice(valueStart, end);
      if (!value.includes('\0')) this.id = value;
    } else if (fieldChars === 5 && buf.startsWith('event', start)) {
      this.event = buf.slice(valueStart, end);
    }
    return out;
  }
}
