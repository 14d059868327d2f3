import { context, trace, SpanKind, type Attributes, type Context, type Span, type Tracer, type TracerProvider } from '@opentelemetry/api';
import type { DiagLogger } from '@opentelemetry/api';
import { ATTR_GUARDED, ATTR_MCP_SESSION_ID, ATTR_SCHEMA_VERSION, ATTR_SESSION_KEY, ATTR_SIDE, SCHEMA_VERSION } from '../semconv.js';
import type { Side } from '../semconv.js';
import { sessionKey } from './session-key.js';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../version.js';

/** String attribute values are cut to this many UTF-16 code units (docs/telemetry.md). */
export const MAX_ATTRIBUTE_CHARS = 256;

export const TRACER_NAME = PACKAGE_NAME;
export const TRACER_VERSION = PACKAGE_VERSION;

export interface SpanEmitterOptions {
  side: Side;
  tracerProvider?: TracerProvider;
  /** FORKWATCH_SESSION_SALT; default ''. */
  salt: string;
  /** Record the raw session id as `mcp.session.id`. Default false: it is a bearer credential. */
  recordRawSessionId: boolean;
  guarded: boolean;
  logger: DiagLogger;
}

/**
 * Emits forkwatch's short spans: each starts and ends at once, so it is exported as the event
 * happens. Never throws into the caller: a failing tracer is logged and the span dropped.
 */
export class SpanEmitter {
  private readonly tracer: Tracer;
  /** Spans that could not be emitted (a throwing tracer or exporter). */
  failures = 0;

  constructor(private readonly opts: SpanEmitterOptions) {
    const provider = opts.tracerProvider ?? trace.getTracerProvider();
    this.tracer = provider.getTracer(TRACER_NAME, TRACER_VERSION);
  }

  /**
   * False while spans would go nowhere: the tracer is the API's no-op, or a proxy of the global
   * provider with no SDK registered yet. Asked per recorded event, so that nothing is computed or
   * kept for a host without an SDK; an SDK registered later is seen at its next event.
   */
  get enabled(): boolean {
    const t = this.tracer as { _delegate?: unknown; _provider?: { getDelegateTracer?: (n: string, v?: string) => unknown } };
    if (t._delegate !== undefined) return true;
    const p = t._provider;
    if (p !== undefined && typeof p.getDelegateTracer === 'function') {
      try {
        return p.getDelegateTracer(TRACER_NAME, TRACER_VERSION) !== undefined;
      } catch {
        return true;
      }
    }
    // A tracer's class does not change: its name (read through a C++ accessor) is asked once.
    return (this.notNoop ??= (this.tracer as object).constructor?.name !== 'NoopTracer');
  }

  /** The tracer is not the API's NoopTracer by its class name; learnt at the first {@link enabled}. */
  private notNoop: boolean | undefined;

  /** The salted key of a raw session id. */
  key(sessionId: string): string {
    return sessionKey(sessionId, this.opts.salt);
  }

  /**
   * Emits span `name` now. `sessionId` (raw) becomes `forkwatch.session.key` (and
   * `mcp.session.id` when opted in); undefined/null attribute values are skipped. `at`: when the
   * event happened (epoch ms), for an event recorded after the fact; default now.
   */
  emit(name: string, sessionId: string | undefined, attrs: Record<string, string | number | boolean | undefined | null>, ctx?: Context, at?: number): void {
    const span = this.start(name, sessionId, attrs, ctx, at);
    if (span === undefined) return;
    try {
      span.end(at);
    } catch (err) {
      this.failures++;
      this.opts.logger.debug('span emit failed', err);
    }
  }

  /**
   * Starts span `name` as {@link emit} does and leaves it open: the caller ends it (e.g. a
   * request's `request.sent`, whose context travels with the request before the span is
   * exported). Undefined when the tracer failed.
   */
  start(name: string, sessionId: string | undefined, attrs: Record<string, string | number | boolean | undefined | null>, ctx?: Context, at?: number): Span | undefined {
    try {
      const attributes: Attributes = {
        [ATTR_SCHEMA_VERSION]: SCHEMA_VERSION,
        [ATTR_SIDE]: this.opts.side,
        [ATTR_GUARDED]: this.opts.guarded,
      };
      if (sessionId) {
        attributes[ATTR_SESSION_KEY] = this.key(sessionId);
        if (this.opts.recordRawSessionId) attributes[ATTR_MCP_SESSION_ID] = sessionId.slice(0, MAX_ATTRIBUTE_CHARS);
      }
      for (const k in attrs) {
        const v = attrs[k];
        if (v === undefined || v === null) continue;
        attributes[k] = typeof v === 'string' && v.length > MAX_ATTRIBUTE_CHARS ? v.slice(0, MAX_ATTRIBUTE_CHARS) : v;
      }
      return this.tracer.startSpan(
        name,
        at === undefined ? { kind: SpanKind.INTERNAL, attributes } : { kind: SpanKind.INTERNAL, attributes, startTime: at },
        ctx ?? context.active(),
      );
    } catch (err) {
      this.failures++;
      this.opts.logger.debug('span emit failed', err);
      return undefined;
    }
  }
}
