import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createSessionGuard } from '../../../packages/instrumentation/src/server/session-guard.js';
import { createServerInstrumentation } from '../../../packages/instrumentation/src/server/server-instrumentation.js';
import type { SessionGuard, SessionGuardOptions } from '../../../packages/instrumentation/src/server/types.js';
import { InstrumentationError } from '../../../packages/instrumentation/src/errors.js';
import {
  ATTR_GUARDED,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_RESUME_LAST_EVENT_FOUND,
  ATTR_RESUME_OUTCOME,
  ATTR_SESSION_CREATED_BY,
  ATTR_SESSION_END_REASON,
  ATTR_SESSION_EVENTS_EVICTED,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  ATTR_SSE_EVENT_SEQ,
  ATTR_SSE_EVENT_SEQ_SOURCE,
  ATTR_SSE_STREAM_ID,
  HEADER_SESSION_INCARNATION,
  META_INCARNATION,
  SPAN_RESUME,
  SPAN_SESSION_CREATED,
  SPAN_SESSION_ENDED,
  SPAN_SSE_EVENT,
} from '../../../packages/instrumentation/src/semconv.js';
import { attr, INIT_BODY, listen, makeMcpServer, parseSse, postHeaders, tracing } from './harness.js';

type Ev = { id?: string; data: string };

/**
 * Every wait of this file is bounded, well under the suite's timeout, and fails saying what it
 * waited for: a wait that outlived the suite's timeout left its server open, and the test file's
 * process then never exited (a run on SDK 1.30.0 under heavy load hung that way).
 */
const WAIT_MS = 8_000;

async function within<T>(what: string, p: Promise<T>, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`session-guard test: ${what} did not finish within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** fetch with a deadline on the whole exchange (headers and body), failing with `what`. */
function fetchWithin(what: string, url: URL, init: RequestInit = {}): Promise<Response> {
  return within(what, fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(WAIT_MS) }));
}

async function withGuard(
  opts: Partial<SessionGuardOptions>,
  fn: (url: URL, guard: SessionGuard) => Promise<void>,
): Promise<void> {
  const guard = createSessionGuard({ createServer: () => makeMcpServer(), reapIntervalMs: 0, ...opts });
  const srv = await listen((req, res) => guard.handleRequest(req, res));
  try {
    await fn(srv.url, guard);
  } finally {
    // The server closes (with its connections) even when the guard's close fails or hangs.
    try {
      await within('guard.close()', guard.close());
    } finally {
      await srv.close();
    }
  }
}

async function rawInit(url: URL): Promise<{ sid: string; inc: string; events: Ev[]; status: number }> {
  const res = await fetchWithin('initialize', url, { method: 'POST', headers: postHeaders(), body: JSON.stringify(INIT_BODY) });
  const events = parseSse(await within('initialize body', res.text()));
  return { sid: res.headers.get('mcp-session-id') ?? '', inc: res.headers.get(HEADER_SESSION_INCARNATION) ?? '', events, status: res.status };
}

async function rawPost(url: URL, sid: string, body: unknown): Promise<{ res: Response; text: string }> {
  const res = await fetchWithin('POST', url, { method: 'POST', headers: postHeaders(sid), body: JSON.stringify(body) });
  return { res, text: await within('POST body', res.text()) };
}

async function rawCall(url: URL, sid: string, id: number): Promise<{ res: Response; events: Ev[] }> {
  const { res, text } = await rawPost(url, sid, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: `t${id}` } } });
  return { res, events: parseSse(text) };
}

/**
 * A GET resume. A replayed stream stays open for live events, so it is read until the
 * `expectEvents` replayed events are in (then hung up), never for a fixed time: under load a
 * replay took longer than the 100-300 ms the reader used to give it.
 */
async function resume(url: URL, sid: string, lastEventId: string, expectEvents = 0): Promise<{ res: Response; json?: any; events?: Ev[] }> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), WAIT_MS);
  try {
    const res = await within(`resume from ${lastEventId}`, fetch(url, {
      headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25', 'last-event-id': lastEventId },
      signal: ac.signal,
    }));
    if (!res.headers.get('content-type')?.includes('text/event-stream')) return { res, json: await within('resume answer', res.json()) };
    const reader = res.body!.getReader();
    let text = '';
    const decoder = new TextDecoder();
    while (parseSse(text).filter((e) => e.id !== undefined).length < expectEvents) {
      const r = await within(`replay of ${expectEvents} event(s) after ${lastEventId} (got: ${JSON.stringify(text)})`, reader.read());
      if (r.done) break;
      text += decoder.decode(r.value, { stream: true });
    }
    return { res, events: parseSse(text) };
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}

describe('session guard', { timeout: 20_000 }, () => {
  it('mints an incarnation: header on every response, InitializeResult._meta, ids <incarnation>-<seq>', async () => {
    await withGuard({}, async (url, guard) => {
      const init = await rawInit(url);
      assert.equal(init.status, 200);
      assert.match(init.inc, /^[0-9a-f]{16}$/);
      assert.equal(guard.incarnationOf(init.sid), init.inc);
      const result = JSON.parse(init.events.find((e) => e.data !== '')!.data);
      assert.equal(result.result._meta[META_INCARNATION], init.inc);
      assert.ok(init.events.every((e) => e.id?.startsWith(`${init.inc}-`)));

      const notified = await rawPost(url, init.sid, { jsonrpc: '2.0', method: 'notifications/initialized' });
      assert.equal(notified.res.status, 202);
      assert.equal(notified.res.headers.get(HEADER_SESSION_INCARNATION), init.inc);

      const call = await rawCall(url, init.sid, 1);
      assert.equal(call.res.headers.get(HEADER_SESSION_INCARNATION), init.inc);
      assert.deepEqual(call.events.map((e) => e.id), [`${init.inc}-3`, `${init.inc}-4`]);

      const replay = await resume(url, init.sid, call.events[0]!.id!, 1);
      assert.equal(replay.res.status, 200);
      assert.equal(replay.res.headers.get(HEADER_SESSION_INCARNATION), init.inc);
      assert.deepEqual(replay.events!.map((e) => e.id), [`${init.inc}-4`], 'replays after the event, nothing before');

      const gap = await resume(url, init.sid, 'e7');
      assert.equal(gap.res.headers.get(HEADER_SESSION_INCARNATION), init.inc);

      const del = await fetchWithin('DELETE', url, { method: 'DELETE', headers: { 'mcp-session-id': init.sid, 'mcp-protocol-version': '2025-11-25' } });
      assert.equal(del.status, 200);
      assert.equal(del.headers.get(HEADER_SESSION_INCARNATION), init.inc);
      assert.equal(guard.stats().sessions, 0, 'DELETE closes the session');
      assert.equal(guard.stats().events, 0);
    });
  });

  it('puts the incarnation in a JSON InitializeResult too', async () => {
    await withGuard({ enableJsonResponse: true }, async (url) => {
      const res = await fetchWithin('initialize', url, { method: 'POST', headers: postHeaders(), body: JSON.stringify(INIT_BODY) });
      const body = (await within('initialize body', res.json())) as { result: { _meta: Record<string, string> } };
      assert.equal(body.result._meta[META_INCARNATION], res.headers.get(HEADER_SESSION_INCARNATION));
    });
  });

  it('answers an unknown session 404/-32001 on every method and allocates nothing', async () => {
    await withGuard({}, async (url, guard) => {
      const expected = { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null };
      const requests: RequestInit[] = [
        { method: 'POST', headers: postHeaders('nope'), body: JSON.stringify(INIT_BODY) },
        { method: 'POST', headers: postHeaders('nope'), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) },
        { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': 'nope' } },
        { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': 'nope', 'last-event-id': '0123456789abcdef-7' } },
        { method: 'DELETE', headers: { 'mcp-session-id': 'nope' } },
      ];
      for (const init of requests) {
        const res = await fetchWithin(`${init.method} of an unknown session`, url, init);
        assert.equal(res.status, 404, `${init.method}`);
        assert.equal(res.headers.get(HEADER_SESSION_INCARNATION), null);
        assert.deepEqual(await within('404 body', res.json()), expected);
      }
      assert.equal(guard.stats().sessions, 0);
      assert.equal(guard.stats().created, 0);
      assert.equal(guard.stats().rejectedUnknownSession, requests.length);
    });
  });

  it('a stock SDK client works through the guard and sees StreamableHTTPError 404 once reaped', async () => {
    let now = 1_000;
    await withGuard({ idleTtlMs: 1000, now: () => now }, async (url, guard) => {
      const transport = new StreamableHTTPClientTransport(url, { reconnectionOptions: { initialReconnectionDelay: 10, maxReconnectionDelay: 10, reconnectionDelayGrowFactor: 1, maxRetries: 0 } });
      const client = new Client({ name: 'c', version: '1' });
      client.onerror = () => undefined;
      try {
        // The SDK's own waits (60 s by default) are bounded below the suite's timeout too.
        await client.connect(transport, { timeout: WAIT_MS });
        const out = await client.callTool({ name: 'echo', arguments: { text: 'ok' } }, undefined, { timeout: WAIT_MS });
        assert.deepEqual(out.content, [{ type: 'text', text: 'ok' }]);
        now += 1001;
        assert.equal(guard.reap(), 1);
        assert.equal(guard.stats().sessions, 0);
        assert.equal(guard.stats().events, 0);
        await assert.rejects(client.callTool({ name: 'echo', arguments: { text: 'again' } }, undefined, { timeout: WAIT_MS }), (err: unknown) => {
          assert.ok(err instanceof StreamableHTTPError);
          assert.equal(err.code, 404);
          return true;
        });
        assert.equal(guard.stats().sessions, 0, 'the 404 allocated nothing');
      } finally {
        await within('client.close()', client.close());
      }
    });
  });

  it('answers 409/-32002 with a reason for an event absent from a known session log', async () => {
    await withGuard({ maxEventsPerSession: 2 }, async (url, guard) => {
      const init = await rawInit(url);
      await rawCall(url, init.sid, 1);
      const call = await rawCall(url, init.sid, 2);
      const cases: Array<[string, string]> = [
        [init.events[0]!.id!, 'event_evicted'],
        ['fedcba9876543210-1', 'other_incarnation'],
        [`${init.inc}-999`, 'unknown_event'],
        ['e7', 'unknown_event'],
      ];
      for (const [lastEventId, reason] of cases) {
        const r = await resume(url, init.sid, lastEventId);
        assert.equal(r.res.status, 409, lastEventId);
        assert.deepEqual(r.json, { jsonrpc: '2.0', error: { code: -32002, message: 'Event not in session log', data: { reason } }, id: null });
      }
      assert.equal(guard.stats().rejectedEventAbsent, cases.length);
      assert.equal(guard.stats().events, 2, 'bounded per session');
      // The newest events are still there and resumable.
      const ok = await resume(url, init.sid, call.events[0]!.id!, 1);
      assert.equal(ok.res.status, 200);
      assert.deepEqual(ok.events!.map((e) => e.id), [call.events[1]!.id]);
    });
  });

  it('evicts a session and its log together: idle, capacity, and then 404, never 409 or a replay', async () => {
    let now = 0;
    await withGuard({ idleTtlMs: 100, maxSessions: 2, now: () => now }, async (url, guard) => {
      const a = await rawInit(url);
      now = 50;
      const b = await rawInit(url);
      assert.equal(guard.stats().events, 4);
      now = 120; // a idle for 120 ms, b for 70 ms
      assert.equal(guard.reap(), 1);
      assert.deepEqual({ sessions: guard.stats().sessions, events: guard.stats().events, reaped: guard.stats().reapedIdle }, { sessions: 1, events: 2, reaped: 1 });
      const gone = await resume(url, a.sid, a.events[0]!.id!);
      assert.equal(gone.res.status, 404);

      const c = await rawInit(url);
      const d = await rawInit(url); // capacity 2: b (least recently used) goes
      assert.equal(guard.stats().evictedCapacity, 1);
      assert.equal(guard.stats().sessions, 2);
      assert.equal((await resume(url, b.sid, b.events[0]!.id!)).res.status, 404);
      assert.equal(guard.incarnationOf(c.sid), c.inc);
      assert.equal(guard.incarnationOf(d.sid), d.inc);
    });
  });

  it('refuses bad options and a colliding session id generator', async () => {
    assert.throws(() => createSessionGuard({ createServer: () => makeMcpServer(), idleTtlMs: -1, maxSessions: 0 }), (err: unknown) => {
      assert.ok(err instanceof InstrumentationError);
      assert.equal(err.code, 'FORKWATCH_ERR_CONFIG_INVALID');
      assert.match(err.message, /idleTtlMs/);
      assert.match(err.message, /maxSessions/);
      return true;
    });
    await withGuard({ sessionIdGenerator: () => 'same' }, async (url, guard) => {
      assert.equal((await rawInit(url)).status, 200);
      assert.equal((await rawInit(url)).status, 500);
      assert.equal(guard.stats().sessions, 1);
    });
  });

  it('with instrumentation: guarded spans carry the minted incarnation; rejections are recorded', async () => {
    const t = tracing();
    const instrumentation = createServerInstrumentation({ tracerProvider: t.provider, salt: 's' });
    let now = 0;
    await withGuard({ instrumentation, idleTtlMs: 10, now: () => now }, async (url, guard) => {
      const init = await rawInit(url);
      await rawCall(url, init.sid, 1);
      await resume(url, init.sid, 'e7');
      await resume(url, 'nope', `${init.inc}-1`);
      now = 100;
      guard.reap();
      // The session ends as its transport closes, asynchronously: wait for it, not for a fixed time.
      const until = Date.now() + WAIT_MS;
      while (t.spans(SPAN_SESSION_ENDED).length === 0) {
        if (Date.now() > until) assert.fail(`forkwatch.session.ended was not emitted within ${WAIT_MS} ms of the reap`);
        await new Promise((r) => setTimeout(r, 10));
      }

      for (const s of t.spans()) assert.equal(attr(s, ATTR_GUARDED), true, s.name);
      const created = t.spans(SPAN_SESSION_CREATED);
      assert.equal(created.length, 1);
      assert.equal(attr(created[0]!, ATTR_SESSION_CREATED_BY), 'initialize');
      assert.equal(attr(created[0]!, ATTR_SESSION_INCARNATION), init.inc);
      assert.equal(attr(created[0]!, ATTR_SESSION_INCARNATION_SOURCE), 'server');

      const events = t.spans(SPAN_SSE_EVENT);
      assert.deepEqual(events.map((e) => attr(e, ATTR_SSE_EVENT_SEQ)), [1, 2, 3, 4]);
      assert.ok(events.every((e) => attr(e, ATTR_SSE_EVENT_SEQ_SOURCE) === 'server' && typeof attr(e, ATTR_SSE_STREAM_ID) === 'string'));

      const resumes = t.spans(SPAN_RESUME);
      const gap = resumes.find((r) => attr(r, ATTR_HTTP_RESPONSE_STATUS_CODE) === 409)!;
      assert.equal(attr(gap, ATTR_RESUME_OUTCOME), 'rejected_gap');
      assert.equal(attr(gap, ATTR_SESSION_INCARNATION), init.inc);
      assert.equal(attr(gap, ATTR_RESUME_LAST_EVENT_FOUND), false);
      const lost = resumes.find((r) => attr(r, ATTR_HTTP_RESPONSE_STATUS_CODE) === 404)!;
      assert.equal(attr(lost, ATTR_RESUME_OUTCOME), 'rejected_404');
      assert.equal(attr(lost, ATTR_SESSION_INCARNATION), undefined);

      const ended = t.spans(SPAN_SESSION_ENDED);
      assert.equal(ended.length, 1);
      assert.equal(attr(ended[0]!, ATTR_SESSION_END_REASON), 'reaped_idle');
      assert.equal(attr(ended[0]!, ATTR_SESSION_EVENTS_EVICTED), 4);
    });
  });
});
