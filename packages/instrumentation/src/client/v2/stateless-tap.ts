import { context, propagation, trace, SpanKind, type Span, type TracerProvider } from '@opentelemetry/api';
import {
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GUARDED,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_REQUEST_ARGS_DIGEST,
  ATTR_REQUEST_DURATION_MS,
  ATTR_REQUEST_OUTCOME,
  ATTR_SCHEMA_VERSION,
  ATTR_SIDE,
  HEADER_SESSION_ID,
  META_TRACEPARENT,
  META_TRACESTATE,
  SCHEMA_VERSION,
  SPAN_REQUEST_SENT,
  SPAN_REQUEST_SETTLED,
} from '../../semconv.js';
import { argsDigest } from '../../common/args-digest.js';
import { componentLogger } from '../../common/logger.js';
import { DEFAULT_REISSUE_WINDOW_MS, RecentShapes } from '../../common/recent-shapes.js';
import { TRACER_NAME, TRACER_VERSION } from '../../common/span-emitter.js';
import type { FetchLike } from '../types.js';

/** Options of {@link createStatelessClientTap}. */
export interface StatelessClientTapOptions {
  tracerProvider?: TracerProvider;
  /** Window within which a repeat of a broken call is a re-issue, ms. Default 30000. */
  reissueWindowMs?: number;
}

/** Largest request body the tap parses, bytes; larger ones pass through unobserved. */
export const MAX_TAPPED_BODY_CHARS = 1024 * 1024;

interface Pending {
  id: string;
  method: string;
  tool?: string;
  digest: string;
  startMs: number;
  span: Span;
  emitted: boolean;
  /** Settled (answered, broken or cancelled): later news of it is ignored. */
  done: boolean;
}

/**
 * Client side of the stateless transport (2026-07-28, no session id): a `fetch` wrapper for the
 * SDK transport. Each JSON-RPC request gets W3C trace context in `params._meta` (traceparent,
 * tracestate) and the HTTP header; `request.sent` and `request.settled` are emitted when the call
 * ends without its answer (`stream_broken`: the response stream ended first; `transport_error`:
 * no response at all) and at once for a call repeating a broken one (its re-issue). Answered calls
 * emit nothing. Requests of a session (`Mcp-Session-Id`) are left to the session instrumentation.
 */
export function createStatelessClientTap(options: StatelessClientTapOptions = {}): { wrapFetch(inner?: FetchLike): FetchLike } {
  const log = componentLogger('client-stateless');
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(TRACER_NAME, TRACER_VERSION);
  const recent = new RecentShapes(options.reissueWindowMs ?? DEFAULT_REISSUE_WINDOW_MS);
  const base = { [ATTR_SCHEMA_VERSION]: SCHEMA_VERSION, [ATTR_SIDE]: 'client', [ATTR_GUARDED]: false };

  const emitSent = (p: Pending): void => {
    if (p.emitted) return;
    p.emitted = true;
    p.span.end(p.startMs);
  };
  const settle = (p: Pending, outcome: string): void => {
    if (p.done) return;
    p.done = true;
    try {
      const now = Date.now();
      if (outcome === 'stream_broken' || outcome === 'transport_error') recent.note(RecentShapes.shape(p.method, p.tool, p.digest), now);
      // answered: nothing to report unless already reported as a re-issue. A call the app
      // cancelled is always reported: its stream closing was the cancel, and a server that saw
      // only the close must not make it an orphan.
      else if (!p.emitted && outcome !== 'cancelled') return;
      emitSent(p);
      const s = tracer.startSpan(
        SPAN_REQUEST_SETTLED,
        {
          kind: SpanKind.INTERNAL,
          startTime: now,
          attributes: {
            ...base,
            [ATTR_MCP_METHOD_NAME]: p.method,
            [ATTR_JSONRPC_REQUEST_ID]: p.id,
            [ATTR_REQUEST_ARGS_DIGEST]: p.digest,
            [ATTR_REQUEST_OUTCOME]: outcome,
            [ATTR_REQUEST_DURATION_MS]: now - p.startMs,
            ...(p.tool !== undefined ? { [ATTR_GEN_AI_TOOL_NAME]: p.tool } : {}),
          },
        },
        trace.setSpan(context.active(), p.span),
      );
      s.end(now);
    } catch (err) {
      log.debug('settle failed', err);
    }
  };

  /** Parses the body, starts a sent span per request and writes its context into `_meta`. */
  const prepare = (body: string, open: Map<string, Pending>): { body: string; pending: Pending[]; traceparent?: string } | undefined => {
    if (body.length > MAX_TAPPED_BODY_CHARS) return undefined;
    const parsed: unknown = JSON.parse(body);
    const msgs = (Array.isArray(parsed) ? parsed : [parsed]) as Array<Record<string, unknown>>;
    const pending: Pending[] = [];
    let traceparent: string | undefined;
    for (const m of msgs) {
      // The app's own cancel (2025 era: a notification; the 2026 era closes the stream instead).
      if (m && typeof m === 'object' && m.method === 'notifications/cancelled' && (m.id === undefined || m.id === null)) {
        const rid = (m.params as { requestId?: unknown } | undefined)?.requestId;
        const p = rid !== undefined && rid !== null ? open.get(String(rid)) : undefined;
        if (p !== undefined) settle(p, 'cancelled');
        continue;
      }
      if (!m || typeof m !== 'object' || typeof m.method !== 'string' || m.id === undefined || m.id === null) continue;
      const params = (m.params && typeof m.params === 'object' ? m.params : {}) as Record<string, unknown>;
      const tool = m.method === 'tools/call' && typeof params.name === 'string' ? params.name.slice(0, 256) : undefined;
      const digest = argsDigest(params);
      const startMs = Date.now();
      const span = tracer.startSpan(
        SPAN_REQUEST_SENT,
        {
          kind: SpanKind.INTERNAL,
          startTime: startMs,
          attributes: {
            ...base,
            [ATTR_MCP_METHOD_NAME]: m.method,
            [ATTR_JSONRPC_REQUEST_ID]: String(m.id),
            [ATTR_REQUEST_ARGS_DIGEST]: digest,
            ...(tool !== undefined ? { [ATTR_GEN_AI_TOOL_NAME]: tool } : {}),
          },
        },
        context.active(),
      );
      const carrier: Record<string, string> = {};
      propagation.inject(trace.setSpan(context.active(), span), carrier);
      const meta = (params._meta && typeof params._meta === 'object' ? params._meta : {}) as Record<string, unknown>;
      if (carrier[META_TRACEPARENT] !== undefined) {
        meta[META_TRACEPARENT] = carrier[META_TRACEPARENT];
        if (carrier[META_TRACESTATE] !== undefined) meta[META_TRACESTATE] = carrier[META_TRACESTATE];
        params._meta = meta;
        m.params = params;
        traceparent ??= carrier[META_TRACEPARENT];
      }
      const p: Pending = { id: String(m.id), method: m.method, tool, digest, startMs, span, emitted: false, done: false };
      if (recent.has(RecentShapes.shape(p.method, p.tool, p.digest), startMs)) emitSent(p);
      pending.push(p);
    }
    if (pending.length === 0) return undefined;
    return { body: JSON.stringify(parsed), pending, ...(traceparent !== undefined ? { traceparent } : {}) };
  };

  /** Reads a copy of the response for the pending ids' answers; what ends unanswered broke. */
  const watch = async (res: Response, pending: Pending[], signal: AbortSignal | null | undefined, conn: Map<string, Pending>): Promise<void> => {
    const open = new Map(pending.map((p) => [p.id, p]));
    const answer = (m: unknown): void => {
      for (const x of Array.isArray(m) ? m : [m]) {
        const r = x as { id?: unknown; result?: unknown; error?: unknown };
        if (r && (r.result !== undefined || r.error !== undefined) && r.id !== undefined) {
          const p = open.get(String(r.id));
          if (p) {
            open.delete(p.id);
            settle(p, r.error !== undefined ? 'error' : 'answered');
          }
        }
      }
    };
    try {
      if (!res.body) return;
      const decoder = new TextDecoder();
      let buf = '';
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        // SSE data lines, or a JSON body (parsed at the end).
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).replace(/\r$/, '');
          buf = buf.slice(nl + 1);
          if (line.startsWith('data:')) {
            try {
              answer(JSON.parse(line.slice(5).trim()));
            } catch {
              // not JSON: not an answer
            }
          } else if (line.startsWith('{') || line.startsWith('[')) {
            try {
              answer(JSON.parse(line));
            } catch {
              buf = `${line}\n${buf}`;
              break;
            }
          }
        }
      }
      if (buf.trim() !== '') {
        try {
          answer(JSON.parse(buf));
        } catch {
          // a partial frame: the stream ended mid-message
        }
      }
    } catch {
      // the stream errored: whatever is still open broke
    }
    // Ended by the client's own abort (the app cancelled the call, or closed its client): no break.
    const outcome = signal?.aborted === true ? 'cancelled' : 'stream_broken';
    for (const p of open.values()) settle(p, outcome);
    for (const p of pending) conn.delete(p.id);
  };

  return {
    wrapFetch(inner: FetchLike = globalThis.fetch): FetchLike {
      /** This connection's calls still waiting, by JSON-RPC id (one id space per client). */
      const open = new Map<string, Pending>();
      return async (input, init) => {
        let prepared: ReturnType<typeof prepare>;
        let req = init;
        try {
          const headers = new Headers(init?.headers);
          if ((init?.method ?? 'GET').toUpperCase() === 'POST' && typeof init?.body === 'string' && !headers.has(HEADER_SESSION_ID)) {
            prepared = prepare(init.body, open);
            if (prepared) {
              for (const p of prepared.pending) open.set(p.id, p);
              if (prepared.traceparent !== undefined) headers.set(META_TRACEPARENT, prepared.traceparent);
              req = { ...init, body: prepared.body, headers };
            }
          }
        } catch (err) {
          log.debug('request tap failed', err);
          prepared = undefined;
          req = init;
        }
        let res: Response;
        try {
          res = await inner(input, req);
        } catch (err) {
          for (const p of prepared?.pending ?? []) {
            settle(p, init?.signal?.aborted === true ? 'cancelled' : 'transport_error');
            open.delete(p.id);
          }
          throw err;
        }
        if (prepared && res.ok && res.body) {
          try {
            const [mine, theirs] = res.body.tee();
            void watch(new Response(mine), prepared.pending, init?.signal, open);
            return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
          } catch (err) {
            log.debug('response tap failed', err);
            for (const p of prepared.pending) open.delete(p.id);
          }
        } else if (prepared) {
          for (const p of prepared.pending) {
            settle(p, 'error');
            open.delete(p.id);
          }
        }
        return res;
      };
    },
  };
}
