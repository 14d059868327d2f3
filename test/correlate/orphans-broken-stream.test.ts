/**
 * A sessionful request whose response stream broke before its answer, that no stream of the
 * session answered afterwards, and that the client then cancelled: an orphan found from the
 * sidecar proxy's spans alone (its `request.settled` with `stream_closed=true`, docs/telemetry.md).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_JSONRPC_KIND,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_OBSERVER,
  ATTR_PROGRESS_TOKEN,
  ATTR_REQUEST_OUTCOME,
  ATTR_REQUEST_STREAM_CLOSED,
  ATTR_SESSION_CREATED_BY,
  ATTR_SESSION_INCARNATION,
  ATTR_SSE_EVENT_ID,
  SPAN_REQUEST_RECEIVED,
  SPAN_REQUEST_SETTLED,
  SPAN_SESSION_CREATED,
  SPAN_SSE_EVENT,
} from '../../packages/instrumentation/src/semconv.js';
import { ByteWriter } from '../../src/correlate/byte-writer.js';
import { encodeBinarySession } from '../../src/correlate/codec/binary-session.js';
import { deserializeSession } from '../../src/correlate/codec/json-session.js';
import type { SessionState } from '../../src/correlate/session-state.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { SpanFactory, sessionKeyOf } from '../fixtures/scenarios/span-factory.js';
import { harness } from './harness.js';

const INC = 'inc-proxy-1';
const CALL = { [ATTR_MCP_METHOD_NAME]: 'tools/call', [ATTR_JSONRPC_REQUEST_ID]: '1', [ATTR_PROGRESS_TOKEN]: '1', [ATTR_GEN_AI_TOOL_NAME]: 'slow_report' };

/** What the proxy emits around one tools/call whose stream broke at 400 ms (and what may follow). */
function proxySpans(f: SpanFactory, o: { answeredAt?: number; cancelledAt?: number; streamClosed?: boolean } = {}): SpanRecord[] {
  const p = { [ATTR_OBSERVER]: 'proxy', [ATTR_SESSION_INCARNATION]: INC };
  const out = [
    f.span('server', SPAN_SESSION_CREATED, 0, { ...p, [ATTR_SESSION_CREATED_BY]: 'initialize' }),
    // Emitted when the stream broke, stamped with the request's arrival.
    f.span('server', SPAN_REQUEST_RECEIVED, 100, { ...p, ...CALL }),
  ];
  if (o.answeredAt !== undefined) {
    out.push(f.span('server', SPAN_SSE_EVENT, o.answeredAt, { ...p, [ATTR_SSE_EVENT_ID]: 'e9', [ATTR_JSONRPC_KIND]: 'response', [ATTR_JSONRPC_REQUEST_ID]: '1' }));
  }
  if (o.cancelledAt !== undefined) {
    out.push(
      f.span('server', SPAN_REQUEST_SETTLED, o.cancelledAt, {
        ...p,
        ...CALL,
        [ATTR_REQUEST_OUTCOME]: 'cancelled',
        [ATTR_REQUEST_STREAM_CLOSED]: o.streamClosed ?? true,
      }),
    );
  }
  return out;
}

const clientSettle = (f: SpanFactory, atMs: number, outcome: string): SpanRecord =>
  f.span('client', SPAN_REQUEST_SETTLED, atMs, { ...CALL, [ATTR_REQUEST_OUTCOME]: outcome });

describe('orphan from a broken stream the client cancelled (proxy spans)', { timeout: 10_000 }, () => {
  it('the proxy alone: reported, already resolved, citing the cancel', () => {
    const h = harness();
    const f = new SpanFactory({ key: sessionKeyOf('BS1') });
    h.ingest(proxySpans(f, { cancelledAt: 3100 }));
    h.advance(10_000);
    assert.deepEqual(h.kinds(), ['orphaned_progress_token']);
    const x = h.findings[0]!;
    assert.equal(x.requestId, '1');
    assert.equal(x.progressToken, '1');
    assert.match(x.summary, /stream ended \(broken, or closed by the server\) before the answer/);
    assert.ok(x.resolvedAtMs !== undefined, 'the client already gave up: resolved');
    assert.ok(x.evidence.some((e) => e.spanName === SPAN_REQUEST_SETTLED && /gave up on it \(cancelled\)/.test(e.shows)));
    assert.ok(x.evidence.some((e) => e.spanName === SPAN_REQUEST_RECEIVED));
  });

  it('answered on a stream of the session (a resume replayed it): nothing', () => {
    const h = harness();
    const f = new SpanFactory({ key: sessionKeyOf('BS2') });
    h.ingest(proxySpans(f, { answeredAt: 900, cancelledAt: 3100 }));
    h.advance(10_000);
    assert.deepEqual(h.findings, []);
  });

  it('a stream that broke but was never cancelled, or a cancel without stream_closed: nothing', () => {
    for (const o of [{}, { cancelledAt: 3100, streamClosed: false }]) {
      const h = harness();
      h.ingest(proxySpans(new SpanFactory({ key: sessionKeyOf('BS3') }), o));
      h.advance(10_000);
      assert.deepEqual(h.findings, [], JSON.stringify(o));
    }
  });

  it("the client's own settle stands: a guard's failed_session_lost recovery is no orphan, a timeout still is", () => {
    for (const [outcome, kinds] of [
      ['failed_session_lost', []],
      ['timeout', ['orphaned_progress_token']],
    ] as const) {
      for (const clientFirst of [true, false]) {
        const h = harness();
        const f = new SpanFactory({ key: sessionKeyOf(`BS4-${outcome}`) });
        const proxy = proxySpans(f, { cancelledAt: 3100 });
        const client = clientSettle(f, 3099, outcome);
        h.ingest(clientFirst ? [client, ...proxy] : [...proxy, client]);
        h.advance(10_000);
        assert.deepEqual(h.kinds(), kinds, `${outcome}, client settle ${clientFirst ? 'first' : 'last'}`);
      }
    }
  });

  it('the broken-stream mark survives the binary session state', () => {
    const h = harness();
    const f = new SpanFactory({ key: sessionKeyOf('BS5') });
    // Before the decision: the full state still holds the request.
    h.ingest([...proxySpans(f, { cancelledAt: 3100 }), clientSettle(f, 3099, 'timeout')]);
    const full = (h.engine as unknown as { full: Map<string, SessionState> }).full;
    const s = [...full.values()][0]!;
    assert.equal(s.requests.get('1')!.settled!.streamClosed, true);
    assert.equal(s.requests.get('1')!.settled!.side, 'client', "the client's settle stands");
    const back = deserializeSession(encodeBinarySession(new ByteWriter(16), s)) as SessionState;
    assert.equal(back.requests.get('1')!.settled!.streamClosed, true);
    assert.equal(back.requests.get('1')!.settled!.outcome, 'timeout');
  });
});
