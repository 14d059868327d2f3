import { describeText, type JsonRpcInfo } from './jsonrpc-info.js';
import { isDigit, JSON_LITERALS, same } from './json-chars.js';
import { detach, internMethod } from './own-string.js';

/**
 * What the event ring keeps of one SSE event's JSON-RPC message: the fields of
 * {@link describeMessage} that `forkwatch.sse.event` carries. One object, refilled per scan.
 */
export interface ScannedMessage {
  kind: JsonRpcInfo['kind'];
  id: string | undefined;
  method: string | undefined;
  /** `params.progressToken` of a `notifications/progress`, else `params._meta.progressToken`. */
  progressToken: string | undefined;
}

const Q = 34; // "
const BS = 92; // \

/**
 * Reads kind, id, method, progress token and tool name of one JSON-RPC message from its text in one pass,
 * without building it (JSON.parse of every SSE event was most of the ring's cost). Only the top
 * level and `params` (and its `_meta`) are read; nested values are skipped by matching brackets
 * and strings. Anything it does not read plainly (a batch, escapes in a key or a wanted string,
 * a malformed top level) goes to JSON.parse, so the answer is describeMessage's. Never throws.
 * Strings it returns are detached from `text` ({@link detach}).
 */
export class MessageScanner implements ScannedMessage {
  kind: JsonRpcInfo['kind'] = 'none';
  id: string | undefined = undefined;
  method: string | undefined = undefined;
  progressToken: string | undefined = undefined;
  /** `params.name` of a `tools/call` when a string (describeMessage's `toolName`), else undefined. */
  toolName: string | undefined = undefined;
  /** Scans answered by JSON.parse rather than read plainly (tests check that plain messages are read plainly). */
  slowScans = 0;
  private text = '';
  private pos = 0;
  /** Where the message ends in {@link text}: its length, or the end of the range {@link scanRange} was given. */
  private end = 0;
  private hasId = false;
  private hasResult = false;
  private hasError = false;
  private paramsToken: string | undefined = undefined;
  private metaToken: string | undefined = undefined;
  private paramsName: string | undefined = undefined;
  /** The last string or number read by {@link value} (a slice of the text), undefined for any other value. */
  private scalar: string | undefined = undefined;
  /** The last string {@link stringEnd} passed had an escape. */
  private escaped = false;
  /** The last number {@link numberEnd} passed was an integer (no fraction, no exponent). */
  private intOnly = false;
  /** The method of the last message that had one (see {@link methodAt}). */
  private lastMethod: string | undefined = undefined;
  /** Index of the next backslash at or after the last one {@link quoteEnd} looked for (the text's length: none); -1 before the first look. */
  private nextBackslash = -1;

  /**
   * @param maxChars larger texts are not read (kind `none`)
   * @param firstOfBatch a batch is described by its first message (the server's records, as
   *   describeText gives it); otherwise a batch is `none` (the client's, as inspectData gives it)
   */
  constructor(
    private readonly maxChars: number,
    private readonly firstOfBatch: boolean,
  ) {}

  /** Scans `text` (one SSE event's data); the fields then describe it. */
  scan(text: string): this {
    return this.scanRange(text, 0, text.length);
  }

  /**
   * Scans `frame[start, end)`, as {@link scan} scans that slice, without cutting it: the SSE frame
   * an event's data line came in is a flat string, and a slice of it a view whose every char
   * read goes through the view (a quarter of the scan's time; `npm run bench -- proxy-events`).
   * Nothing outside the range is read.
   */
  scanRange(frame: string, start: number, end: number): this {
    this.kind = 'none';
    this.id = this.method = this.progressToken = this.toolName = undefined;
    if (end <= start || end - start > this.maxChars) return this;
    this.text = frame;
    this.pos = start;
    this.end = end;
    this.nextBackslash = -1;
    this.hasId = this.hasResult = this.hasError = false;
    this.paramsToken = this.metaToken = this.paramsName = undefined;
    let ok = false;
    try {
      ok = this.message();
    } catch {
      ok = false;
    }
    this.text = '';
    if (!ok) return this.slow(start === 0 && end === frame.length ? frame : frame.slice(start, end));
    if (this.method !== undefined) {
      this.kind = this.hasId ? 'request' : 'notification';
      this.progressToken = this.method === 'notifications/progress' ? this.paramsToken : this.metaToken;
      this.toolName = this.method === 'tools/call' ? this.paramsName : undefined;
    } else {
      this.kind = this.hasResult ? 'response' : this.hasError ? 'error' : 'none';
      this.progressToken = undefined;
    }
    if (!this.hasId) this.id = undefined;
    return this;
  }

  private slow(text: string): this {
    this.slowScans++;
    const info = describeText(text, this.maxChars)[0] ?? { kind: 'none' as const };
    // describeText reads a batch's first message; the ring's records describe single messages.
    const batch = !this.firstOfBatch && text.trimStart().charCodeAt(0) === 91;
    this.kind = batch ? 'none' : info.kind;
    this.id = batch || info.id === undefined ? undefined : detach(info.id);
    this.method = batch || info.method === undefined ? undefined : internMethod(info.method);
    this.progressToken = batch || info.progressToken === undefined ? undefined : detach(info.progressToken);
    this.toolName = batch || info.toolName === undefined ? undefined : detach(info.toolName);
    return this;
  }

  /** The whole text is one object: reads its members. */
  private message(): boolean {
    if (this.ws() !== 123) return false;
    this.pos++;
    if (!this.members(1)) return false;
    return this.ws() === -1;
  }

  /** Members of the object whose `{` was just read, up to its `}`; level 1 = the message, 2 = params, 3 = _meta. */
  private members(level: number): boolean {
    const t = this.text;
    if (this.ws() === 125) {
      this.pos++;
      return true;
    }
    for (;;) {
      if (this.ws() !== Q) return false;
      const kStart = this.pos + 1;
      const kEnd = this.stringEnd(kStart);
      // An escaped key may spell a wanted one: JSON.parse decides.
      if (kEnd < 0 || this.escaped) return false;
      this.pos = kEnd + 1;
      if (this.ws() !== 58) return false;
      this.pos++;
      const klen = kEnd - kStart;
      const c = this.ws();
      if (level === 1 && klen === 2 && same(t, kStart, 'id')) {
        if (!this.value()) return false;
        this.hasId = this.scalar !== undefined;
        this.id = this.scalar === undefined ? undefined : detach(this.scalar);
      } else if (level === 1 && klen === 6 && same(t, kStart, 'method')) {
        if (c === Q) {
          const start = this.pos + 1;
          if (!this.passString(start)) return false;
          this.method = this.escaped ? internMethod(this.unescape(start)) : this.methodAt(start, this.pos - 1);
        } else {
          if (!this.value()) return false;
          this.method = undefined;
        }
      } else if (level === 1 && klen === 6 && same(t, kStart, 'params')) {
        // A repeated key counts as JSON.parse counts it: the last one.
        this.paramsToken = this.metaToken = this.paramsName = undefined;
        if (c === 123) {
          this.pos++;
          if (!this.members(2)) return false;
        } else if (!this.skip()) return false;
      } else if (level === 2 && klen === 5 && same(t, kStart, '_meta')) {
        this.metaToken = undefined;
        if (c === 123) {
          this.pos++;
          if (!this.members(3)) return false;
        } else if (!this.skip()) return false;
      } else if (level === 2 && klen === 4 && same(t, kStart, 'name')) {
        // Only a string names a tool; a name of any other kind reads as none.
        if (c === Q) {
          const start = this.pos + 1;
          if (!this.passString(start)) return false;
          this.paramsName = this.escaped ? this.unescape(start) : detach(t.slice(start, this.pos - 1));
        } else {
          if (!this.skip()) return false;
          this.paramsName = undefined;
        }
      } else if (level >= 2 && klen === 13 && same(t, kStart, 'progressToken')) {
        if (!this.value()) return false;
        const token = this.scalar === undefined ? undefined : detach(this.scalar);
        if (level === 2) this.paramsToken = token;
        else this.metaToken = token;
      } else {
        if (level === 1 && klen === 6 && same(t, kStart, 'result')) this.hasResult = true;
        else if (level === 1 && klen === 5 && same(t, kStart, 'error')) this.hasError = true;
        if (!this.skip()) return false;
      }
      const d = this.ws();
      this.pos++;
      if (d === 125) return true;
      if (d !== 44) return false;
    }
  }

  /**
   * The method spelled by `text[start, end)` (no escapes): the last one read when it is the same
   * (compared in place: no slice, no hash, no map lookup; a stream's events mostly share one), else
   * the interned slice.
   */
  private methodAt(start: number, end: number): string {
    const last = this.lastMethod;
    if (last !== undefined && last.length === end - start) {
      // Char by char here: startsWith with a string not known at compile time is a builtin call, dearer for ~20 chars.
      const t = this.text;
      let i = 0;
      while (i < last.length && t.charCodeAt(start + i) === last.charCodeAt(i)) i++;
      if (i === last.length) return last;
    }
    return (this.lastMethod = internMethod(this.text.slice(start, end)));
  }

  /** Passes the string whose contents start at `start` (its closing quote then at pos - 1); false when unterminated. */
  private passString(start: number): boolean {
    const end = this.stringEnd(start);
    if (end < 0) return false;
    this.pos = end + 1;
    return true;
  }

  /** The string just passed (contents from `start`), its escapes read by JSON.parse. */
  private unescape(start: number): string {
    return JSON.parse(this.text.slice(start - 1, this.pos)) as string;
  }

  /** Reads a value into {@link scalar} (a string's text, a number as String(Number) gives it). */
  private value(): boolean {
    const t = this.text;
    const c = this.ws();
    this.scalar = undefined;
    if (c === Q) {
      const start = this.pos + 1;
      if (!this.passString(start)) return false;
      // A slice of the text: the caller detaches (or interns) what it keeps.
      this.scalar = this.escaped ? this.unescape(start) : t.slice(start, this.pos - 1);
      return true;
    }
    if (c === 45 || (c >= 48 && c <= 57)) {
      const start = this.pos;
      const end = this.numberEnd(start);
      if (end < 0) return false;
      this.pos = end;
      // An integer of up to 15 digits, other than -0, reads back as itself: no Number round trip.
      const plain = this.intOnly && end - start - (c === 45 ? 1 : 0) <= 15 && !(c === 45 && t.charCodeAt(start + 1) === 48);
      this.scalar = plain ? t.slice(start, end) : String(Number(t.slice(start, end)));
      return true;
    }
    return this.skip();
  }

  /** Passes over one value of any kind. */
  private skip(): boolean {
    const t = this.text;
    const c = this.ws();
    if (c === Q) {
      const end = this.stringEnd(this.pos + 1);
      if (end < 0) return false;
      this.pos = end + 1;
      return true;
    }
    if (c === 123 || c === 91) {
      // Nested containers: brackets matched (strings skipped whole by indexOf), contents not checked.
      let depth = 0;
      for (let i = this.pos; i < this.end; i++) {
        const ch = t.charCodeAt(i);
        if (ch === Q) {
          i = this.quoteEnd(i + 1);
          if (i < 0) return false;
        } else if (ch === 123 || ch === 91) depth++;
        else if (ch === 125 || ch === 93) {
          depth--;
          if (depth === 0) {
            this.pos = i + 1;
            return true;
          }
        }
      }
      return false;
    }
    if (c === 45 || (c >= 48 && c <= 57)) {
      const end = this.numberEnd(this.pos);
      if (end < 0) return false;
      this.pos = end;
      return true;
    }
    for (const lit of JSON_LITERALS) {
      if (this.pos + lit.length <= this.end && t.startsWith(lit, this.pos)) {
        this.pos += lit.length;
        return true;
      }
    }
    return false;
  }

  /**
   * Index of the closing quote of a string inside a skipped value, whose contents start at
   * `from`, or -1. Found by indexOf rather than char by char (a tool's result is most of an SSE
   * event's text, and most of it is strings): the quote, unless a backslash comes first, then
   * the next quote after the escaped char. Its contents are not checked (a control char makes the
   * text invalid JSON, where the scanner's answer is not JSON.parse's in a skipped value either).
   */
  private quoteEnd(from: number): number {
    const t = this.text;
    for (;;) {
      const q = t.indexOf('"', from);
      if (q < 0 || q >= this.end) return -1;
      let b = this.nextBackslash;
      // One indexOf per backslash in the text, however many strings there are; none: its length.
      if (b < from) {
        b = t.indexOf('\\', from);
        this.nextBackslash = b = b < 0 || b > this.end ? this.end : b;
      }
      if (b > q) return q;
      from = b + 2;
    }
  }

  /** Index of the closing quote of the string whose contents start at `from`, or -1; {@link escaped} says if it had a backslash. */
  private stringEnd(from: number): number {
    const t = this.text;
    let escaped = false;
    const end = this.end;
    for (let i = from; i < end; i++) {
      const ch = t.charCodeAt(i);
      // Letters and most of what keys and methods are made of: one comparison.
      if (ch > BS) continue;
      if (ch === Q) {
        this.escaped = escaped;
        return i;
      }
      if (ch === BS) {
        escaped = true;
        i++;
      } else if (ch < 32) return -1;
    }
    return -1;
  }

  /** End of a JSON number starting at `from` (its grammar checked), or -1. */
  private numberEnd(from: number): number {
    const t = this.text;
    // Past the end of the range, as past the end of a string, there is no char (NaN).
    const end = this.end;
    const at = (i: number): number => (i < end ? t.charCodeAt(i) : NaN);
    let i = from;
    this.intOnly = false;
    if (at(i) === 45) i++;
    const intStart = i;
    while (isDigit(at(i))) i++;
    if (i === intStart || (at(intStart) === 48 && i - intStart > 1)) return -1;
    const intEnd = i;
    if (at(i) === 46) {
      const f = ++i;
      while (isDigit(at(i))) i++;
      if (i === f) return -1;
    }
    const e = at(i);
    this.intOnly = i === intEnd && e !== 101 && e !== 69;
    if (e === 101 || e === 69) {
      i++;
      const s = at(i);
      if (s === 43 || s === 45) i++;
      const d = i;
      while (isDigit(at(i))) i++;
      if (i === d) return -1;
    }
    return i;
  }

  /** Skips whitespace; the char code there, -1 at the end. */
  private ws(): number {
    const t = this.text;
    let i = this.pos;
    const end = this.end;
    while (i < end) {
      const c = t.charCodeAt(i);
      if (c !== 32 && c !== 10 && c !== 13 && c !== 9) break;
      i++;
    }
    this.pos = i;
    return i < end ? t.charCodeAt(i) : -1;
  }
}
