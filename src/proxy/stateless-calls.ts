import { randomBytes } from 'node:crypto';
import { ROOT_CONTEXT, TraceFlags, trace, type Context } from '@opentelemetry/api';
import { argsDigest, type JsonRpcInfo } from './building-blocks.js';

/**
 * Default re-issue window, ms: a stateless call repeating (method, tool, argument digest) one whose
 * stream broke this recently is a re-issue, and its span goes out at once (docs/telemetry.md,
 * "Stateless transport"). The detector's `reissueWindowMs` default; the two should agree.
 */
export const DEFAULT_PROXY_REISSUE_WINDOW_MS = 30_000;

/** What the stateless rows of docs/telemetry.md need of one request, read from its body. */
export interface StatelessDetails {
  /** `forkwatch.request.args_digest`: what a re-issue repeats under a new request id. */
  digest: string;
  /** The client's trace (`params._meta.traceparent`), else a fresh one: both spans of the call share it. */
  ctx: Context;
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The context named by a W3C `traceparent`, or undefined when it is absent or malformed. */
function remoteContext(tp: unknown): Context | undefined {
  if (typeof tp !== 'string') return undefined;
  const m = TRACEPARENT.exec(tp.trim().toLowerCase());
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16) & TraceFlags.SAMPLED, isRemote: true });
}

/**
 * Reads the request `id` of a POST body (one message or a batch): its argument digest and trace.
 * Parsed only when a span is about to go out, or a re-issue is possible: never per call on the
 * fast path. Never throws; undefined when the body holds no such request.
 */
export function statelessDetails(body: string, id: string): StatelessDetails | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
    if (!m || typeof m !== 'object') continue;
    const msg = m as { id?: unknown; params?: { _meta?: { traceparent?: unknown } } };
    if (String(msg.id) !== id) continue;
    const params = msg.params && typeof msg.params === 'object' ? msg.params : undefined;
    const ctx =
      remoteContext(params?._meta?.traceparent) ??
      trace.setSpanContext(ROOT_CONTEXT, { traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex'), traceFlags: TraceFlags.SAMPLED });
    return { digest: argsDigest(params), ctx };
  }
  return undefined;
}

/** Identity of a call for re-issue matching: method, tool and argument digest. */
export function callShape(info: JsonRpcInfo, digest: string): string {
  return `${info.method ?? ''}\u0000${info.toolName ?? ''}\u0000${digest}`;
}

/**
 * Shapes of stateless calls whose stream broke unanswered, remembered for the re-issue window so
 * that a re-issue's span goes out at once (without it, a re-issue answered in time would cost no
 * span, and the broken original would read as an orphan). Bounded by `max`: past it the oldest
 * shape is forgotten (a re-issue of it then shows only if it is slow).
 */
export class BrokenCalls {
  /** Shape -> when its stream broke (epoch ms); insertion order is break order. */
  private readonly shapes = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly max: number,
  ) {}

  get size(): number {
    return this.shapes.size;
  }

  broke(shape: string, at: number): void {
    this.shapes.delete(shape);
    this.shapes.set(shape, at);
    if (this.shapes.size > this.max) this.shapes.delete(this.shapes.keys().next().value as string);
  }

  /** Whether a call of `shape` arriving at `at` re-issues one that broke within the window. */
  reissues(shape: string, at: number): boolean {
    this.expire(at);
    const brokeAt = this.shapes.get(shape);
    return brokeAt !== undefined && at >= brokeAt && at - brokeAt <= this.windowMs;
  }

  private expire(now: number): void {
    for (const [shape, at] of this.shapes) {
      if (now - at <= this.windowMs) break;
      this.shapes.delete(shape);
    }
  }
}
