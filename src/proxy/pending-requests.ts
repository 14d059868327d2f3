import { DeferredRequests, epochNow, type JsonRpcInfo } from './building-blocks.js';
import type { ProxySession } from './session-table.js';
import type { WireSpans } from './wire-spans.js';

/** A JSON-RPC request the proxy forwarded and has not seen answered. */
interface HeldRequest {
  key: string;
  at: number;
  session: ProxySession | undefined;
  sessionId: string | undefined;
  info: JsonRpcInfo;
  protocolVersion: string | undefined;
}

/**
 * Requests in flight, by session id and JSON-RPC id, bounded by `max`. As in-process server
 * instrumentation: one answered within `delayMs` costs no span; one still waiting then, or whose
 * answer stream broke first, emits `forkwatch.request.received` stamped with its arrival time.
 */
export class PendingRequests {
  private readonly byKey = new Map<string, HeldRequest>();
  private readonly deferred: DeferredRequests<HeldRequest>;

  constructor(
    private readonly spans: WireSpans,
    private readonly delayMs: number,
    private readonly max: number,
    /** A request's span went out late or on a broken stream: a moment for its session. */
    private readonly onMoment: (session: ProxySession) => void,
  ) {
    this.deferred = new DeferredRequests<HeldRequest>(delayMs, (h) => {
      this.byKey.delete(h.key);
      this.emit(h);
      if (h.session !== undefined) this.onMoment(h.session);
    });
  }

  get size(): number {
    return this.byKey.size;
  }

  private emit(h: HeldRequest): void {
    this.spans.received(h.session, h.sessionId, h.info, h.protocolVersion, h.at);
  }

  /** A request forwarded; returns its key (undefined when it was emitted at once). */
  add(session: ProxySession | undefined, sessionId: string | undefined, info: JsonRpcInfo, protocolVersion: string | undefined, at = epochNow()): string | undefined {
    const key = `${sessionId ?? ''}\u0000${info.id ?? ''}`;
    const h: HeldRequest = { key, at, session, sessionId, info, protocolVersion };
    if (this.delayMs <= 0 || info.id === undefined || info.method === 'initialize' || this.byKey.size >= this.max || this.byKey.has(key)) {
      this.emit(h);
      return undefined;
    }
    this.byKey.set(key, h);
    this.deferred.add(h);
    return key;
  }

  /** An answer (response or error) to `id` crossed the proxy. */
  answer(sessionId: string | undefined, id: string): void {
    const key = `${sessionId ?? ''}\u0000${id}`;
    const h = this.byKey.get(key);
    if (h === undefined) return;
    this.byKey.delete(key);
    this.deferred.delete(h);
  }

  /** The stream that would carry `key`'s answer broke: the request is in danger, out now. */
  broke(key: string): void {
    const h = this.byKey.get(key);
    if (h === undefined) return;
    this.byKey.delete(key);
    this.deferred.delete(h);
    this.emit(h);
    if (h.session !== undefined) this.onMoment(h.session);
  }
}
