import type { Finding } from '../../model/finding.js';
import type { AttrValue, SpanRecord } from '../../model/span-record.js';
import {
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_REQUEST_ARGS_DIGEST,
  ATTR_REQUEST_HANDLER_OUTCOME,
  ATTR_REQUEST_MESSAGES_AFTER_CLOSE,
  ATTR_REQUEST_OUTCOME,
  ATTR_REQUEST_STREAM_CLOSED,
  SPAN_REQUEST_HANDLED,
  SPAN_REQUEST_RECEIVED,
  SPAN_REQUEST_SENT,
  SPAN_REQUEST_SETTLED,
} from '@forkwatch/instrumentation/semconv';
import { duplicateExecution } from '../analyze/duplicate-execution.js';
import { orphanedRequest } from '../analyze/orphaned-request.js';
import type { AnomalyDraft } from '../analyze/stateless-shared.js';
import { workAfterCancel } from '../analyze/work-after-cancel.js';
import { citedEvidence } from '../cited-evidence.js';
import { findingId } from '../finding-id.js';
import type { Side } from '../../model/span-record.js';
import { type StatelessCall, callShape } from './stateless-call.js';

/** Tunables of the stateless arm (a subset of the engine's options). */
export interface StatelessOptions {
  /** ms (client clock, else server clock) after a broken call within which a re-issue counts as one. */
  reissueWindowMs: number;
  /** ms (detector clock) a call waits after its newest span before duplicates and late work are decided. */
  decisionWindowMs: number;
  /** Calls tracked at once; past it the least recently updated is forgotten. */
  maxStatelessCalls: number;
  /** A call idle this long (ms, detector clock) is forgotten. */
  sessionTtlMs: number;
}

/** Pseudo session key of a stateless finding: the original call's trace (what the API and UI key on). */
export const STATELESS_FINDING_KEY_PREFIX = '~stateless:';

const STATELESS_SPANS: ReadonlySet<string> = new Set([SPAN_REQUEST_SENT, SPAN_REQUEST_RECEIVED, SPAN_REQUEST_SETTLED, SPAN_REQUEST_HANDLED]);

/**
 * Correlates the request spans of the stateless transport (no session key) across client and
 * server by trace id and request id, a re-issue to its original by method, tool and argument
 * digest, and reports orphaned requests, duplicate executions and work after cancel. Like the
 * engine: synchronous, time only through `now` arguments.
 */
export class StatelessTracker {
  /** Least recently updated first. */
  private readonly calls = new Map<string, StatelessCall>();
  private readonly byShape = new Map<string, Set<StatelessCall>>();

  constructor(
    private readonly opts: StatelessOptions,
    private readonly report: (f: Finding, lagMs: number) => void,
  ) {}

  /** Whether the tracker takes this keyless span. */
  static accepts(span: SpanRecord): boolean {
    return STATELESS_SPANS.has(span.name);
  }

  get size(): number {
    return this.calls.size;
  }

  ingest(span: SpanRecord, side: Side, now: number): void {
    const a = span.attributes;
    const requestId = str(a, ATTR_JSONRPC_REQUEST_ID);
    if (requestId === undefined) return;
    const ref = `${span.traceId}\u0000${requestId}`;
    let c = this.calls.get(ref);
    if (c === undefined) {
      c = { ref, traceId: span.traceId, requestId, lastIngestMs: now, reported: new Set() };
      this.calls.set(ref, c);
      while (this.calls.size > this.opts.maxStatelessCalls) this.forget(this.calls.values().next().value as StatelessCall);
    } else {
      this.calls.delete(ref);
      this.calls.set(ref, c);
    }
    c.lastIngestMs = now;
    const shapeBefore = callShape(c);
    c.method ??= str(a, ATTR_MCP_METHOD_NAME);
    c.tool ??= str(a, ATTR_GEN_AI_TOOL_NAME);
    c.digest ??= str(a, ATTR_REQUEST_ARGS_DIGEST);
    if (side === 'client') c.clientService ??= span.service;
    else c.serverService ??= span.service;
    const fact = { traceId: span.traceId, spanId: span.spanId, side, name: span.name, timeMs: span.startMs, ingestMs: now };
    if (span.name === SPAN_REQUEST_SENT) c.sent = fact;
    else if (span.name === SPAN_REQUEST_RECEIVED) c.received = fact;
    else if (span.name === SPAN_REQUEST_SETTLED) c.settled = { ...fact, outcome: str(a, ATTR_REQUEST_OUTCOME) };
    else {
      c.handled = {
        ...fact,
        endMs: span.endMs,
        outcome: str(a, ATTR_REQUEST_HANDLER_OUTCOME),
        streamClosed: a[ATTR_REQUEST_STREAM_CLOSED] === true || a[ATTR_REQUEST_STREAM_CLOSED] === 'true',
        messagesAfterClose: Number(a[ATTR_REQUEST_MESSAGES_AFTER_CLOSE] ?? 0) || 0,
      };
      const pv = str(a, ATTR_MCP_PROTOCOL_VERSION);
      if (pv !== undefined) c.handled.protocolVersion = pv;
    }
    const shape = callShape(c);
    if (shape !== undefined && shape !== shapeBefore) {
      let set = this.byShape.get(shape);
      if (set === undefined) this.byShape.set(shape, (set = new Set()));
      set.add(c);
    }
  }

  /** Decides calls whose windows have passed and forgets idle ones. `all`: decide duplicates and late work now (offline). */
  tick(now: number, all = false): void {
    for (const c of [...this.calls.values()]) {
      const idle = now - c.lastIngestMs;
      if (all || idle >= this.opts.decisionWindowMs) {
        this.emit(workAfterCancel(c), now);
        this.emit(duplicateExecution(c, this.sameShape(c), this.opts.reissueWindowMs), now);
      }
      // A re-issue may still come within the window: only then is an unanswered break an orphan.
      if (idle >= Math.max(this.opts.reissueWindowMs, this.opts.decisionWindowMs)) {
        this.emit(orphanedRequest(c, this.sameShape(c), this.opts.reissueWindowMs), now);
      }
      if (idle >= this.opts.sessionTtlMs) this.forget(c);
    }
  }

  private sameShape(c: StatelessCall): Iterable<StatelessCall> {
    const shape = callShape(c);
    return shape === undefined ? [] : (this.byShape.get(shape) ?? []);
  }

  private emit(d: AnomalyDraft | undefined, now: number): void {
    if (d === undefined || d.call.reported.has(d.kind)) return;
    d.call.reported.add(d.kind);
    const key = `${STATELESS_FINDING_KEY_PREFIX}${d.call.traceId}`;
    const { evidence, firstSeenMs, firstIngestMs } = citedEvidence(d.evidence, now);
    const f: Finding = {
      id: findingId(d.kind, key, d.identity),
      kind: d.kind,
      service: d.call.serverService ?? d.call.clientService ?? 'unknown_service',
      sessionKey: key,
      requestId: d.call.requestId,
      summary: d.summary,
      evidence,
      firstSeenMs,
      detectedAtMs: now,
    };
    this.report(f, Math.max(0, now - firstIngestMs));
  }

  private forget(c: StatelessCall): void {
    this.calls.delete(c.ref);
    const shape = callShape(c);
    if (shape === undefined) return;
    const set = this.byShape.get(shape);
    set?.delete(c);
    if (set?.size === 0) this.byShape.delete(shape);
  }
}

function str(a: Record<string, AttrValue>, k: string): string | undefined {
  const v = a[k];
  if (v === undefined || v === '') return undefined;
  return typeof v === 'string' ? v : String(v);
}
