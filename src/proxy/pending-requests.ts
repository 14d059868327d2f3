import { DeferredRequests, epochNow, type JsonRpcInfo } from './building-blocks.js';
import type { ProxySession } from './session-table.js';
import { BrokenCalls, callShape, statelessDetails, type StatelessDetails } from './stateless-calls.js';
import type { CancelledRequest } from './cancelled-requests.js';
import type { WireSpans } from './wire-spans.js';

/** A JSON-RPC request the proxy forwarded and has not seen answered. */
interface HeldRequest {
  key: string;
  at: number;
  session: ProxySession | undefined;
  sessionId: string | undefined;
  info: JsonRpcInfo;
  protocolVersion: string | undefined;
  /** Stateless (no session id either way): the POST body, parsed only if a span goes out. */
  body: string | undefined;
  details: StatelessDetails | undefined;
  /** Its `request.received` went out. */
  out: boolean;
  /** The exchange that carried it is still open (the answer may yet come on it, or it may break). */
  open: boolean;
  /**
   * Its exchange ended cleanly without the answer: the server closed the stream (to be polled, or
   * as it shut down). Only a cancel whose reason is the client's timeout then settles it.
   */
  closed?: boolean;
}

/**
 * Requests in flight, by session id and JSON-RPC id, bounded by `max`. As in-process server
 * instrumentation: one answered within `delayMs` costs no span; one still waiting then, or whose
 * answer stream broke first, emits `forkwatch.request.received` stamped with its arrival time.
 *
 * Stateless requests (no session id either way) stay tracked until their exchange ends: one whose
 * stream ended without its answer also emits `forkwatch.request.handled` with `stream_closed=true`
 * (the proxy's evidence that it broke: the detector then finds the orphan from the proxy's spans
 * alone), and a re-issue of it (same method, tool and argument digest within `reissueWindowMs`)
 * emits its `request.received` at once, so that a re-issue answered in time still shows.
 *
 * Sessionful requests stay tracked while their exchange is open. One whose stream ended before
 * its answer is then remembered (at most `max`, the oldest forgotten first) until an answer to it
 * crosses any stream of the session (a resume replayed it) or the client cancels it
 * (`notifications/cancelled`): then `forkwatch.request.settled` goes out, outcome `cancelled`,
 * `stream_closed=true`: the proxy's evidence, alone, that the answer never came. A stream that
 * broke counts with any cancel. One the server closed cleanly counts only with a cancel whose
 * reason is the client's timeout: a server may close a call's stream to be polled (the client
 * resumes and the answer comes later), and an app that then cancels its call was not left hanging;
 * a server that shut down gracefully (a rolling restart) closes it the same way, and the client
 * that resumed then waits to its timeout for an answer no process holds.
 */
export class PendingRequests {
  private readonly byKey = new Map<string, HeldRequest>();
  private readonly deferred: DeferredRequests<HeldRequest>;
  private readonly brokenCalls: BrokenCalls;
  /** Sessionful requests whose stream broke unanswered, by key; insertion order is break order. */
  private readonly broken = new Map<string, HeldRequest>();

  constructor(
    private readonly spans: WireSpans,
    private readonly delayMs: number,
    private readonly max: number,
    /** A request's span went out late or on a broken stream: a moment for its session. */
    private readonly onMoment: (session: ProxySession) => void,
    reissueWindowMs: number,
  ) {
    this.deferred = new DeferredRequests<HeldRequest>(delayMs, (h) => {
      // A request stays while its exchange is open: its stream may still break.
      if (!h.open) this.byKey.delete(h.key);
      this.received(h);
      if (h.session !== undefined) this.onMoment(h.session);
    });
    this.brokenCalls = new BrokenCalls(reissueWindowMs, max);
  }

  get size(): number {
    return this.byKey.size;
  }

  private detailsOf(h: HeldRequest): StatelessDetails | undefined {
    if (h.details === undefined && h.body !== undefined && h.info.id !== undefined) h.details = statelessDetails(h.body, h.info.id);
    return h.details;
  }

  private received(h: HeldRequest): void {
    if (h.out) return;
    h.out = true;
    this.spans.received(h.session, h.sessionId, h.info, h.protocolVersion, h.at, this.detailsOf(h));
  }

  /**
   * A request forwarded; returns its key (undefined when it was emitted at once and is not tracked).
   * @param body the POST body text when the request is stateless (no session id presented or answered)
   * @param scope tells apart requests of the same id in different exchanges (stateless clients all
   *   count ids from 0); an answer must then name the same scope
   */
  add(
    session: ProxySession | undefined,
    sessionId: string | undefined,
    info: JsonRpcInfo,
    protocolVersion: string | undefined,
    at = epochNow(),
    body?: string,
    scope?: string,
  ): string | undefined {
    const key = `${sessionId ?? ''}\u0000${info.id ?? ''}\u0000${scope ?? ''}`;
    const stateless = body !== undefined && session === undefined && sessionId === undefined && info.id !== undefined;
    const h: HeldRequest = { key, at, session, sessionId, info, protocolVersion, body: stateless ? body : undefined, details: undefined, out: false, open: true };
    const room = info.id !== undefined && this.byKey.size < this.max && !this.byKey.has(key);
    // Parsed only while some stateless call is known broken: the common case reads nothing.
    const d = stateless && this.brokenCalls.size > 0 ? this.detailsOf(h) : undefined;
    const reissue = d !== undefined && this.brokenCalls.reissues(callShape(info, d.digest), at);
    if (reissue || this.delayMs <= 0 || info.method === 'initialize' || !room) {
      this.received(h);
      if (!room || (info.method === 'initialize' && !stateless)) return undefined;
      // Emitted already, tracked still: its stream may break (stateless: handled; else: a cancel to watch for).
      this.byKey.set(key, h);
      return key;
    }
    this.byKey.set(key, h);
    this.deferred.add(h);
    return key;
  }

  /**
   * An answer (response or error) to `id` crossed the proxy. Returns the request when its
   * `request.received` went out already (late, or on a broken stream): its answer is then evidence
   * the detector must see, or it would read the request as never answered.
   */
  answer(sessionId: string | undefined, id: string, scope?: string): { info: JsonRpcInfo; protocolVersion: string | undefined; at: number } | undefined {
    const key = `${sessionId ?? ''}\u0000${id}\u0000${scope ?? ''}`;
    let h = this.byKey.get(key);
    if (h !== undefined) {
      this.byKey.delete(key);
      this.deferred.delete(h);
    }
    if (this.broken.size > 0) {
      h ??= this.broken.get(key);
      this.broken.delete(key);
    }
    return h?.out === true ? h : undefined;
  }

  /**
   * The client cancelled requests on session `sessionId` (`notifications/cancelled`). Each one whose
   * stream ended unanswered (broke; or closed, cancelled on the client's timeout), and that no
   * stream answered since, gets its `request.settled`; one the app cancelled after a clean close
   * is forgotten.
   */
  cancelled(sessionId: string, cancels: readonly CancelledRequest[], at = epochNow()): void {
    for (const c of cancels) {
      const key = `${sessionId}\u0000${c.id}\u0000`;
      const h = this.broken.get(key);
      if (h === undefined) continue;
      this.broken.delete(key);
      if (h.closed === true && !c.timedOut) continue;
      this.deferred.delete(h);
      this.received(h);
      this.spans.settledCancelled(sessionId, h.info, h.protocolVersion, h.at, at);
    }
  }

  /** Remembers a sessionful request whose exchange ended unanswered (the oldest forgotten past `max`). */
  private remember(key: string, h: HeldRequest): void {
    this.broken.delete(key);
    this.broken.set(key, h);
    if (this.broken.size > this.max) this.broken.delete(this.broken.keys().next().value as string);
  }

  /**
   * The exchange that carried `key` ended. `broken`: its stream broke before the answer: the
   * request is in danger, its span out now. A stateless request unanswered at the end of its
   * exchange has lost its answer either way (there is no resume).
   */
  ended(key: string, broken: boolean): void {
    const h = this.byKey.get(key);
    if (h === undefined) return;
    h.open = false;
    const stateless = h.body !== undefined;
    if (!broken && !stateless) {
      // Ended without its answer but not broken (the server closed the stream, to be polled or as
      // it shut down): a pending deferral still emits its span if no answer comes; a cancel on the
      // client's timeout then settles it.
      if (h.out) this.byKey.delete(key);
      if (h.sessionId !== undefined && h.info.id !== undefined) {
        h.closed = true;
        this.remember(key, h);
      }
      return;
    }
    this.byKey.delete(key);
    this.deferred.delete(h);
    this.received(h);
    if (!stateless && h.sessionId !== undefined && h.info.id !== undefined) {
      h.closed = false;
      this.remember(key, h);
    }
    if (stateless) {
      const d = this.detailsOf(h);
      if (d !== undefined) {
        const now = epochNow();
        this.spans.handledStreamClosed(h.info, d, now);
        this.brokenCalls.broke(callShape(h.info, d.digest), now);
      }
    }
    if (h.session !== undefined) this.onMoment(h.session);
  }
}
