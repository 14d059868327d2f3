/** One piece of an SSE body: a whole event block to inspect, or raw text to pass uninspected. */
export interface SsePiece {
  text: string;
  /** true: `text` is one complete event block (ending with its blank line). */
  complete: boolean;
}

/**
 * Splits SSE text into raw event blocks, keeping every byte (comments, `retry:`, line endings) so
 * a block can be passed on exactly or dropped whole. Bounded: a block longer than `maxChars` is
 * passed on uninspected as it arrives, up to its end.
 */
export class SseBlockSplitter {
  private buf = '';
  /** Leading chars of `buf` known to hold no line end. */
  private scanned = 0;
  private block = '';
  private passing = false;
  /** Part of the current line was already passed on (passing mode): its end is not a blank line. */
  private midLine = false;

  constructor(private readonly maxChars: number) {}

  push(text: string): SsePiece[] {
    const out: SsePiece[] = [];
    this.buf += text;
    let start = 0;
    // What is left of `buf` from the last push holds no line end: only the new text is scanned.
    let from = this.scanned;
    for (;;) {
      const nl = this.lineEnd(from > start ? from : start);
      if (nl < 0) break;
      const end = nl + (this.buf[nl] === '\r' && this.buf[nl + 1] === '\n' ? 2 : 1);
      const blank = nl === start && !this.midLine;
      this.midLine = false;
      const raw = this.buf.slice(start, end);
      start = end;
      if (this.passing) {
        out.push({ text: raw, complete: false });
        if (blank) this.passing = false;
        continue;
      }
      this.block += raw;
      if (blank) {
        out.push({ text: this.block, complete: true });
        this.block = '';
      }
    }
    this.buf = this.buf.slice(start);
    // A CR at the very end may start a CRLF: scanned again with the next text.
    this.scanned = this.buf.length > 0 && this.buf.charCodeAt(this.buf.length - 1) === 13 ? this.buf.length - 1 : this.buf.length;
    if (this.block.length + this.buf.length > this.maxChars) {
      out.push({ text: this.block + this.buf, complete: false });
      this.midLine = this.buf.length > 0;
      this.block = '';
      this.buf = '';
      this.scanned = 0;
      this.passing = true;
    } else if (this.passing && this.buf.length > 0) {
      out.push({ text: this.buf, complete: false });
      this.buf = '';
      this.scanned = 0;
      this.midLine = true;
    }
    return out;
  }

  /** Whatever is left at the end of the body (an unterminated event: the SDK ignores it too). */
  rest(): string {
    const r = this.block + this.buf;
    this.block = '';
    this.buf = '';
    this.scanned = 0;
    return r;
  }

  private lineEnd(from: number): number {
    for (let i = from; i < this.buf.length; i++) {
      const c = this.buf.charCodeAt(i);
      if (c === 10) return i;
      if (c === 13) return i + 1 >= this.buf.length ? -1 : i;
    }
    return -1;
  }
}
