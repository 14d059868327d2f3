import type { IncomingMessage, ServerResponse } from 'node:http';
import { SseParser, type SseEvent } from './building-blocks.js';
import { ChunkText } from './chunk-text.js';
import type { Deadline, Deadlines } from './deadlines.js';
import { scanEvents, type ScannedEvent } from './sse-scan.js';

/** What the relay's owner decides on the first id-bearing event of a held answer. */
export type HoldDecision = 'pass' | 'refuse';

export interface SseRelayHooks {
  /** Each complete event, after its bytes went out (or, while held, before). Must not throw. */
  onEvent(ev: SseEvent): void;
  /**
   * Held answers only: the first event with an id, before any byte went out. `refuse` drops the
   * held bytes; the owner then answers the client itself.
   */
  decide?(ev: SseEvent): HoldDecision;
  /** The head and held bytes are about to go out (held answers: after `pass` or the hold's end). */
  onRelease?(): void;
  /**
   * Held answers only: the hold time ran out before an id-bearing event. A promise keeps holding
   * until it settles (its owner bounds it): `pass` releases, `refuse` drops the held bytes (the
   * owner answered the client). Undefined: release now.
   */
  onHoldExpired?(): Promise<HoldDecision> | undefined;
}

/**
 * Passes an upstream `text/event-stream` body through to the client chunk by chunk, unchanged,
 * parsing a copy to report each event (bounded by `maxEventChars`: larger events pass through
 * unrecorded). With `hold`, nothing is written until the first id-bearing event is judged, the
 * hold time runs out, or `maxHoldChars` are held: then everything held goes out at once, unless
 * refused. Backpressure: the upstream is paused while the client's socket is full. A chunk of
 * whole plain events, between events, is read off its bytes (sse-scan.ts); any other as text.
 */
export class SseRelay {
  private readonly parser: SseParser;
  private readonly decoder = new ChunkText();
  /** The events of the last chunk read off its bytes (reused chunk to chunk). */
  private readonly scanned: ScannedEvent[] = [];
  private held: Buffer[] | undefined;
  private heldChars = 0;
  private timer: Deadline | undefined;
  private writeHead: (() => void) | undefined;
  /** A chunk went out (and the head with it). */
  private wrote = false;
  /** Id-bearing events seen. */
  events = 0;
  refused = false;

  constructor(
    private readonly upstream: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly hooks: SseRelayHooks,
    private readonly maxEventChars: number,
    hold: { writeHead: () => void; ms: number; maxChars: number; deadlines: Deadlines } | undefined,
    /** Told of every chunk (the body's idle bound). */
    private readonly idle: { touch(): void },
  ) {
    this.parser = new SseParser(maxEventChars);
    if (hold) {
      this.held = [];
      this.writeHead = hold.writeHead;
      this.heldMax = hold.maxChars;
      this.timer = hold.deadlines.add(hold.ms, expire, this);
    }
    upstream.on('data', (chunk: Buffer) => this.onData(chunk));
    res.on('drain', () => upstream.resume());
  }

  private heldMax = 0;
  /**
   * Text that ends the body so far (the last chunk's, with earlier ones when it is under 4
   * chars), to tell a body that ended inside an event. A reference, not a slice per chunk.
   */
  private tail = '';

  /** Events discarded from the record for their size (passed through all the same). */
  get oversized(): number {
    return this.parser.oversized;
  }

  /** True while bytes are held back. */
  get holding(): boolean {
    return this.held !== undefined;
  }

  private onData(chunk: Buffer): void {
    this.idle.touch();
    if (this.refused) return;
    if (this.held !== undefined) {
      this.held.push(chunk);
      this.heldChars += chunk.length;
    } else {
      this.wrote = true;
      if (!this.res.write(chunk)) this.upstream.pause();
    }
    let events: readonly SseEvent[];
    if (this.parser.idle && this.decoder.clear && scanEvents(chunk, this.maxEventChars, this.scanned)) {
      // Whole events: the body so far ends with a blank line.
      this.tail = '\n\n';
      events = this.scanned;
    } else {
      const text = this.decoder.write(chunk);
      this.tail = text.length >= 4 ? text : (this.tail.slice(-4) + text).slice(-4);
      events = this.parser.push(text);
    }
    for (let i = 0; i < events.length; i++) {
      const ev = events[i]!;
      if (this.held !== undefined && ev.id !== undefined && this.hooks.decide) {
        if (this.hooks.decide(ev) === 'refuse') {
          this.refuse();
          return;
        }
        this.hooks.onEvent(ev);
        this.release();
        continue;
      }
      if (ev.id !== undefined) this.events++;
      this.hooks.onEvent(ev);
    }
    if (this.held !== undefined && this.heldChars > this.heldMax) this.release();
  }

  /** Sends the head on its own unless a chunk already took it out (or the answer is held). */
  flushHead(): void {
    if (this.wrote || this.held !== undefined || this.refused || this.res.writableEnded || this.res.destroyed) return;
    this.res.flushHeaders();
  }

  /** @internal the hold ran out. */
  expire(): void {
    const asked = this.hooks.onHoldExpired?.();
    if (asked === undefined) return this.release();
    void asked.then((d) => {
      if (this.held === undefined || this.refused) return;
      if (d === 'refuse') this.refuse();
      else this.release();
    });
  }

  /** Lets everything held go out and stops holding. */
  release(): void {
    if (this.held === undefined || this.refused) return;
    this.timer?.cancel();
    const held = this.held;
    this.held = undefined;
    this.hooks.onRelease?.();
    this.writeHead?.();
    for (const b of held) if (!this.res.write(b)) this.upstream.pause();
    // Nothing held (a stream open and silent): the status goes out on its own, as unheld ones do.
    if (held.length === 0 && !this.res.writableEnded && !this.res.destroyed) this.res.flushHeaders();
  }

  /** Stops the hold's clock (the owner decides the release itself). */
  stopTimer(): void {
    this.timer?.cancel();
  }

  /** Drops what is held without sending it (the owner answered the client itself). */
  drop(): void {
    this.refuse();
  }

  private refuse(): void {
    this.timer?.cancel();
    this.refused = true;
    this.held = undefined;
    this.upstream.destroy();
  }

  /** The upstream body ended: what is left unparsed is a truncated event. */
  finish(): { truncated: boolean } {
    this.timer?.cancel();
    this.release();
    const t = this.tail.slice(-4);
    // A body that stops without a blank line stopped inside an event.
    const truncated = t !== '' && !(t.endsWith('\n\n') || t.endsWith('\r\r') || t.endsWith('\r\n\r\n'));
    return { truncated };
  }

  dispose(): void {
    this.timer?.cancel();
    this.held = undefined;
  }
}

function expire(relay: SseRelay): void {
  relay.expire();
}
