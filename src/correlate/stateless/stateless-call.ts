import type { SpanFact } from '../session-state.js';

/** A server's `forkwatch.request.handled`: what its handler did and whether the stream was still open. */
export interface HandledFact extends SpanFact {
  /** Span end: when the handler finished, emitter's clock. */
  endMs: number;
  /** `completed`, `error` or `cancelled`. */
  outcome?: string;
  streamClosed: boolean;
  messagesAfterClose: number;
  /** `mcp.protocol.version` of the request, when the server named it. */
  protocolVersion?: string;
}

/** A client's request.settled. */
export interface SettledFact extends SpanFact {
  outcome?: string;
}

/**
 * One JSON-RPC request of the stateless transport, both sides, correlated by trace id and request
 * id (trace context travels in `params._meta`, so the server's spans share the client's trace).
 */
export interface StatelessCall {
  /** `${traceId}\u0000${requestId}` */
  ref: string;
  traceId: string;
  requestId: string;
  method?: string;
  tool?: string;
  /** `forkwatch.request.args_digest`: what a re-issue repeats. */
  digest?: string;
  clientService?: string;
  serverService?: string;
  sent?: SpanFact;
  settled?: SettledFact;
  received?: SpanFact;
  handled?: HandledFact;
  /** Detector clock of the newest span of this call. */
  lastIngestMs: number;
  /** Kinds already reported about this call. */
  reported: Set<string>;
}

/**
 * Whether closing the request's response stream is, by its protocol revision, the client's cancel:
 * from MCP 2026-07-28 on ("closing the stream counts as cancellation"), so a server that saw its
 * stream close cannot tell a cut from the app's own abort. Revisions are dates, compared as text.
 */
export function closeIsCancel(protocolVersion: string | undefined): boolean {
  return protocolVersion !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(protocolVersion) && protocolVersion >= '2026-07-28';
}

/** Client settle outcomes that mean the response stream broke without an answer. */
export const BROKEN_OUTCOMES: ReadonlySet<string> = new Set(['stream_broken', 'transport_error']);

/** What a re-issue repeats: method, tool and argument digest (undefined when the call has no digest). */
export function callShape(c: StatelessCall): string | undefined {
  if (c.digest === undefined || c.method === undefined) return undefined;
  return `${c.method}\u0000${c.tool ?? ''}\u0000${c.digest}`;
}
