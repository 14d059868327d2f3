/** The seed naive server's rehydration pattern: concurrent requests sharing one rehydration, and which resumes are forks. */
import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createServerInstrumentation } from '../../../packages/instrumentation/src/server/server-instrumentation.js';
import type { ServerInstrumentation } from '../../../packages/instrumentation/src/server/types.js';
import {
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_RESUME_LAST_EVENT_FOUND,
  ATTR_RESUME_LAST_EVENT_ID,
  ATTR_RESUME_OUTCOME,
  ATTR_SESSION_CLIENT_SUPPLIED_ID,
  ATTR_SESSION_CREATED_BY,
  ATTR_SESSION_INCARNATION,
  SPAN_RESUME,
  SPAN_SESSION_CREATED,
} from '../../../packages/instrumentation/src/semconv.js';
import {
  attr,
  INIT_BODY,
  listen,
  makeMcpServer,
  parseSse,
  postHeaders,
  tracing,
} from './harness.js';
import { SALT, waitFor } from './naive-app.js';
/** Per-transport counter store (`e1, e2, ...`), replaying its whole log for a cursor it does not know. */
class CounterStore implements EventStore {
  private n = 0;
  private readonly log: Array<{ id: string; streamId: string; message: JSONRPCMessage }> = [];
  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `e${++this.n}`;
    this.log.push({ id, streamId, message });
    return id;
  }
  async replayEventsAfter(lastEventId: string, { send }: { send: (id: string, m: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const at = this.log.findIndex((e) => e.id === lastEventId);
    if (at < 0) {
      for (const e of this.log) await send(e.id, e.message);
      return '';
    }
    const streamId = this.log[at]!.streamId;
    for (const e of this.log.slice(at + 1)) if (e.streamId === streamId) await send(e.id, e.message);
    return streamId;
  }
}

/**
 * The seed's naive server (src/demo/naive-server.ts), instrumented the same way: the transport is
 * observed before its session id exists, the id is then forced onto it (rehydration) before any
 * handleRequest, and concurrent requests for one unknown id share ONE rehydration, so the request
 * that mints the new life is often not the resume. `hold` keeps a rehydration waiting until the
 * test releases it (to make both requests arrive first).
 */
function naiveServerPattern(inst: ServerInstrumentation) {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const rehydrating = new Map<string, Promise<StreamableHTTPServerTransport>>();
  const arrivals: string[] = [];
  let hold: Promise<void> = Promise.resolve();
  const newSession = async (id: string | undefined): Promise<StreamableHTTPServerTransport> => {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: id === undefined ? randomUUID : () => id,
      eventStore: new CounterStore(),
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    inst.observeTransport(transport);
    await makeMcpServer().connect(transport);
    if (id !== undefined) {
      const inner = (transport as unknown as { _webStandardTransport: { sessionId?: string; _initialized: boolean } })._webStandardTransport;
      inner.sessionId = id;
      inner._initialized = true;
      sessions.set(id, transport);
    }
    return transport;
  };
  const handler = inst.wrapHandler(async (req: IncomingMessage, res: ServerResponse) => {
    const sid = req.headers['mcp-session-id'] as string | undefined;
    arrivals.push(`${req.method} ${req.headers['last-event-id'] ?? '-'}`);
    let body: unknown;
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    }
    let t = sid ? sessions.get(sid) : undefined;
    if (!t && !sid) t = await newSession(undefined);
    if (!t && sid) {
      let p = rehydrating.get(sid);
      if (!p) {
        const gate = hold;
        p = gate.then(() => newSession(sid));
        rehydrating.set(sid, p);
      }
      t = await p;
    }
    await t!.handleRequest(req, res, body);
  });
  return {
    handler,
    sessions,
    arrivals,
    holdRehydration(): () => void {
      let release!: () => void;
      hold = new Promise<void>((r) => (release = r));
      return release;
    },
    async reap(sid: string): Promise<void> {
      const t = sessions.get(sid)!;
      sessions.delete(sid);
      rehydrating.delete(sid);
      inst.markEnded(t, 'reaped_idle');
      await t.close();
    },
    async close(): Promise<void> {
      for (const t of sessions.values()) await t.close().catch(() => undefined);
    },
  };
}

/** Initializes a session over raw HTTP; returns its id and the last event id the client received. */
async function rawInitialize(url: URL): Promise<{ sid: string; cursor: string }> {
  const res = await fetch(url, { method: 'POST', headers: postHeaders(), body: JSON.stringify(INIT_BODY) });
  const sid = res.headers.get('mcp-session-id')!;
  const events = parseSse(await res.text()).filter((e) => e.id !== undefined);
  assert.ok(sid && events.length > 0, 'initialize answered on an SSE stream with event ids');
  return { sid, cursor: events.at(-1)!.id! };
}

/** Opens a GET stream and returns its status once the head arrived (the body is abandoned). */
async function openGet(url: URL, sid: string, lastEventId?: string): Promise<{ status: number; abort: () => void }> {
  const ac = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
  const res = await fetch(url, { headers, signal: ac.signal });
  return { status: res.status, abort: () => ac.abort() };
}


describe('server instrumentation, the seed naive server pattern', { timeout: 20_000 }, () => {
  it('a resume answered by a life a concurrent GET rehydrated is forked (created_by GET, client_supplied_id)', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT });
    const app = naiveServerPattern(inst);
    const srv = await listen(app.handler);
    const streams: Array<{ abort: () => void }> = [];
    try {
      const { sid, cursor } = await rawInitialize(srv.url);
      await app.reap(sid);
      // The SDK reconnects its standalone GET (no cursor) and the cut POST stream's resume together;
      // the standalone GET arrives first and starts the one shared rehydration.
      const release = app.holdRehydration();
      const standalone = openGet(srv.url, sid);
      await waitFor(() => app.arrivals.includes('GET -'));
      const resume = openGet(srv.url, sid, cursor);
      await waitFor(() => app.arrivals.includes(`GET ${cursor}`));
      release();
      const [a, b] = await Promise.all([standalone, resume]);
      streams.push(a, b);
      assert.deepEqual([a.status, b.status], [200, 200], 'the naive server answered both from a rehydrated life');
      await waitFor(() => t.spans(SPAN_RESUME).length > 0);

      const created = t.spans(SPAN_SESSION_CREATED);
      assert.equal(created.length, 2);
      const reborn = created[1]!;
      assert.equal(attr(reborn, ATTR_SESSION_CREATED_BY), 'GET');
      assert.equal(attr(reborn, ATTR_SESSION_CLIENT_SUPPLIED_ID), true);
      assert.equal(attr(reborn, ATTR_RESUME_LAST_EVENT_ID), undefined, 'minted by the standalone GET, not by the resume');
      const spans = t.spans(SPAN_RESUME);
      assert.equal(spans.length, 1);
      assert.equal(attr(spans[0]!, ATTR_RESUME_LAST_EVENT_ID), cursor);
      assert.equal(attr(spans[0]!, ATTR_HTTP_RESPONSE_STATUS_CODE), 200);
      assert.equal(attr(spans[0]!, ATTR_RESUME_OUTCOME), 'forked');
      assert.equal(attr(spans[0]!, ATTR_RESUME_LAST_EVENT_FOUND), false);
      assert.equal(attr(spans[0]!, ATTR_SESSION_INCARNATION), attr(reborn, ATTR_SESSION_INCARNATION));
    } finally {
      for (const s of streams) s.abort();
      await app.close();
      await srv.close();
    }
  });

  it('a resume arriving after another request rehydrated the id is forked too (cursor unknown to the reborn life)', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT });
    const app = naiveServerPattern(inst);
    const srv = await listen(app.handler);
    const streams: Array<{ abort: () => void }> = [];
    try {
      const { sid, cursor } = await rawInitialize(srv.url);
      await app.reap(sid);
      streams.push(await openGet(srv.url, sid));
      await waitFor(() => t.spans(SPAN_SESSION_CREATED).length === 2);
      const b = await openGet(srv.url, sid, cursor);
      streams.push(b);
      assert.equal(b.status, 200);
      await waitFor(() => t.spans(SPAN_RESUME).length > 0);
      assert.equal(attr(t.spans(SPAN_SESSION_CREATED)[1]!, ATTR_SESSION_CREATED_BY), 'GET');
      assert.equal(attr(t.spans(SPAN_RESUME)[0]!, ATTR_RESUME_OUTCOME), 'forked');
    } finally {
      for (const s of streams) s.abort();
      await app.close();
      await srv.close();
    }
  });

  it('a resume into a life created by initialize is not a fork, even when its cursor is unknown', async () => {
    const t = tracing();
    const inst = createServerInstrumentation({ tracerProvider: t.provider, salt: SALT });
    const app = naiveServerPattern(inst);
    const srv = await listen(app.handler);
    const streams: Array<{ abort: () => void }> = [];
    try {
      const { sid, cursor } = await rawInitialize(srv.url);
      streams.push(await openGet(srv.url, sid, cursor));
      streams.push(await openGet(srv.url, sid, 'e999'));
      await waitFor(() => t.spans(SPAN_RESUME).length === 2);
      const [known, unknown] = t.spans(SPAN_RESUME);
      assert.equal(attr(known!, ATTR_RESUME_OUTCOME), 'resumed');
      assert.equal(attr(known!, ATTR_RESUME_LAST_EVENT_FOUND), true);
      // A replay gap on a sound life (the detector's replay_gap), not a minted replacement.
      assert.equal(attr(unknown!, ATTR_RESUME_OUTCOME), 'resumed');
      assert.equal(attr(unknown!, ATTR_RESUME_LAST_EVENT_FOUND), false);
      assert.equal(t.spans(SPAN_SESSION_CREATED).length, 1);
    } finally {
      for (const s of streams) s.abort();
      await app.close();
      await srv.close();
    }
  });
});
