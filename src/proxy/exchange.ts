import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import {
  HEADER_LAST_EVENT_ID,
  HEADER_PROTOCOL_VERSION,
  HEADER_SESSION_ID,
  HEADER_SESSION_INCARNATION,
  SseParser,
  detach,
  epochNow,
  resumeOutcome,
  writeJsonRpcError,
  type JsonRpcInfo,
  type SseEvent,
} from './building-blocks.js';
import { cancelledRequests, readCancelled } from './cancelled-requests.js';
import { describeEvent, mayAnswer, NO_MESSAGE } from './event-info.js';
import { forwardHeaders, headerOf } from './forward-headers.js';
import { forks, judgeEvent, sessionReissued, type Continuity } from './guard-rules.js';
import { IdleBound } from './idle-bound.js';
import { passInitialize } from './pass-initialize.js';
import { passPlain } from './pass-plain.js';
import type { EventOrigin } from './event-history.js';
import { payloadPrint } from './payload-print.js';
import { RequestBody } from './request-body.js';
import type { PendingResume, ProxySession } from './session-table.js';
import { probeAfterOutage } from './outage-probe.js';
import { probeSession } from './resume-probe.js';
import { SseRelay } from './sse-relay.js';
import { printOf, type ScannedEvent } from './sse-scan.js';
import { upstreamTimeouts } from './upstream-timeouts.js';
import { JSONRPC_UPSTREAM_ERROR, refuse, type ProxyContext } from './proxy-context.js';

/** What a request without a body (not a POST) carries. */
const NO_BODY: readonly JsonRpcInfo[] = [];

/**
 * The head of an SSE answer goes out with its first chunk, as a bare pipe sends it; alone (a
 * write of its own) only when no chunk followed within the tick that brought the head: a stream
 * that opens and waits still shows its status at once.
 */
function flushHead(relay: SseRelay): void {
  relay.flushHead();
}

/** Resolves a session's pending resume with what its first event showed. */
function settleResume(ctx: ProxyContext, s: ProxySession, c: Continuity | undefined, r: PendingResume = s.pendingResume!): void {
  if (s.pendingResume === r) s.pendingResume = undefined;
  const forked = c !== undefined && forks(c);
  ctx.spans.resume(s, r, resumeOutcome(r.status, forked), forked ? false : c === undefined ? undefined : s.log.knows(r.lastEventId));
}

/**
 * One client request and its answer: forwarded to the upstream as it arrives, the answer passed
 * back as it arrives (SSE event by event), observed on the way, and, under `--guard`, refused
 * where the rules say (docs/proxy.md).
 */
export function handleExchange(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse): void {
  const { opts, stats, table, spans } = ctx;
  stats.requests++;
  const method = (req.method ?? 'GET').toUpperCase();
  const presented = headerOf(req.rawHeaders, HEADER_SESSION_ID);
  const cursor = headerOf(req.rawHeaders, HEADER_LAST_EVENT_ID);
  const pv = headerOf(req.rawHeaders, HEADER_PROTOCOL_VERSION);
  const arrivedAt = epochNow();
  let session = presented !== undefined ? table.get(presented) : undefined;
  if (opts.guard && session?.lost) {
    // Refused without going upstream, but still read: a stock client's cancel of a call the lost
    // session left hanging (sent at its timeout) is the proxy's only evidence of that hang.
    if (method === 'POST' && presented !== undefined) readCancelled(req, opts.maxParseBytes, (cancels) => ctx.requests.cancelled(presented, cancels));
    else req.resume();
    refuse(ctx, res, 'sessionLost');
    return;
  }

  const up = opts.upstreamUrl;
  const base = up.pathname.endsWith('/') ? up.pathname.slice(0, -1) : up.pathname;
  const upstream = http.request({
    agent: ctx.agent,
    host: up.hostname,
    port: up.port || 80,
    method,
    path: `${base}${req.url ?? '/'}`,
    headers: forwardHeaders(req.rawHeaders, up.host),
  });

  // ---- request body: forwarded as it comes, a bounded copy kept to read JSON-RPC ids ----
  const body = method === 'POST' ? new RequestBody(opts.maxParseBytes) : undefined;
  const bodyInfos = (): readonly JsonRpcInfo[] => body?.infos() ?? NO_BODY;
  const requestKeys: string[] = [];
  if (body !== undefined) {
    req.on('data', (c: Buffer) => body.push(c));
    // The client gave up on requests its cancels name, whatever the upstream answers (a 502 while
    // the server is down included): those whose stream ended unanswered are settled.
    if (presented !== undefined) req.once('end', () => ctx.requests.cancelled(presented, cancelledRequests(body.infos(), body.text)));
  }
  req.pipe(upstream);

  // ---- timeouts: connect (502) and status line (504) ----
  const timeouts = upstreamTimeouts(ctx.deadlines, upstream, opts.connectTimeoutMs, opts.headersTimeoutMs);

  let answered = false;
  /** The guard answered the client itself; the upstream's answer was dropped. */
  let refused = false;
  let done = false;
  let relay: SseRelay | undefined;
  /** The stream broke (either side) before the answer ended: requests it carried are in danger. */
  const finish = (broken: boolean): void => {
    if (done) return;
    done = true;
    timeouts.headers.cancel();
    relay?.dispose();
    for (const k of requestKeys) ctx.requests.ended(k, broken);
    const s = session;
    // A resume stream that closed without an event: its answer stands as given.
    if (s?.pendingResume !== undefined && s.pendingResume === myResume) settleResume(ctx, s, undefined);
  };
  let myResume: PendingResume | undefined;

  res.on('close', () => {
    if (!res.writableFinished) {
      stats.clientAborts++;
      upstream.destroy();
    }
    finish(!answered || !res.writableFinished);
  });

  upstream.on('error', () => {
    // The guard closed the upstream after answering the client itself.
    if (relay?.refused || refused) return finish(false);
    if (!res.headersSent) {
      const timedOut = timeouts.failure === 'headers';
      if (timedOut) stats.upstreamTimeouts++;
      else {
        stats.upstreamErrors++;
        // Not reached at all: the server may be down, and come back as a new process.
        if (session !== undefined) session.upstreamDown = true;
      }
      req.resume();
      writeJsonRpcError(res, timedOut ? 504 : 502, JSONRPC_UPSTREAM_ERROR, timedOut ? 'Upstream timed out' : 'Upstream unavailable', {
        reason: `forkwatch proxy: ${timedOut ? 'no answer' : timeouts.failure === 'connect' ? 'connect timed out' : 'connection failed'}`,
      });
    } else {
      res.destroy();
    }
    finish(true);
  });

  upstream.on('response', (ures) => {
    timeouts.headers.cancel();
    const status = ures.statusCode ?? 502;
    const answeredId = headerOf(ures.rawHeaders, HEADER_SESSION_ID);
    const ok = status >= 200 && status < 300;
    const upstreamInc = headerOf(ures.rawHeaders, HEADER_SESSION_INCARNATION);
    const first = bodyInfos()[0];
    const rpcMethod = first?.method;

    if (opts.guard && sessionReissued(presented, answeredId)) {
      refused = true;
      ures.destroy();
      answered = true;
      refuse(ctx, res, 'sessionReissued');
      if (session !== undefined) {
        session.lost = true;
        ctx.history.moment(session, true);
      }
      return;
    }

    // ---- sessions: created, adopted, ended ----
    if (answeredId !== undefined && answeredId !== presented) {
      // Answered under another id than presented: a moment for the id the client held.
      if (session !== undefined) ctx.history.moment(session, true);
      const known = table.get(answeredId);
      if (known !== undefined) session = known;
      else {
        session = table.create(answeredId, true);
        if (upstreamInc !== undefined) session.incarnation = upstreamInc;
        spans.created(session, { createdBy: method === 'POST' ? (rpcMethod ?? 'unknown') : method, clientSupplied: false, method, lastEventId: cursor, protocolVersion: pv }, arrivedAt);
        if (presented !== undefined) ctx.history.moment(session, true);
      }
    } else if (session === undefined && presented !== undefined && ok) {
      // First sight mid-life (the proxy restarted, or forgot it): adopt it, no creation to report.
      session = table.create(presented, false);
    }
    const s = session;
    const sid = s?.id ?? presented;
    if (s !== undefined && presented !== undefined && (status === 404 || (method === 'DELETE' && ok))) {
      spans.ended(s, status === 404 ? 'not_found_upstream' : 'closed_by_client');
      // A clean end (DELETE) takes its history along; a rejected resume is a moment.
      if (status === 404 && cursor !== undefined) ctx.history.moment(s, false);
      else ctx.history.drop(s);
      table.delete(s.id);
    }
    stats.sessionsTracked = table.size;
    stats.sessionsForgotten = table.forgotten;

    // ---- requests the body carried ----
    // Stateless (no session id either way): answered on this exchange or never; scoped to it.
    const scope = sid === undefined && method === 'POST' ? String(++ctx.exchanges) : undefined;
    if (ok) {
      for (const info of bodyInfos()) {
        if (info.kind !== 'request') continue;
        const k = ctx.requests.add(s, sid, info, pv, arrivedAt, scope !== undefined ? body?.text : undefined, scope);
        if (k !== undefined) requestKeys.push(k);
      }
    }

    // ---- resumes: outcome once the first event shows whether the log continued ----
    if (cursor !== undefined) {
      if (s !== undefined && table.get(s.id) === s) ctx.history.moment(s, true);
      const r: PendingResume = { lastEventId: cursor, status, method, protocolVersion: pv, at: arrivedAt };
      if (s === undefined) spans.resumeUntracked(sid, r, resumeOutcome(status, false));
      else if (!ok || status === 404) settleResume(ctx, s, undefined, r);
      else {
        if (s.pendingResume !== undefined) settleResume(ctx, s, undefined);
        s.pendingResume = r;
        myResume = r;
      }
    }

    /**
     * An answer crossed. One to a request whose `request.received` went out already must reach
     * the detector, or a later session end (DELETE) reads as "ended before answering": `recorded`
     * (an id-bearing event about to be recorded) makes it a moment once recorded; an answer that
     * leaves no event (JSON, an event without id) is reported as the request's settle instead.
     */
    const answer = (info: JsonRpcInfo, recorded: boolean): boolean => {
      if ((info.kind !== 'response' && info.kind !== 'error') || info.id === undefined) return false;
      const late = ctx.requests.answer(sid, info.id, scope);
      if (late === undefined || sid === undefined || scope !== undefined) return false;
      if (!recorded) spans.settledAnswered(sid, late.info, late.protocolVersion, late.at, info.kind === 'error' ? 'error' : 'answered', epochNow());
      return recorded;
    };
    const headers = forwardHeaders(ures.rawHeaders);
    // An upstream that mints incarnations itself (a forkwatch-guarded server) keeps its own.
    if (s !== undefined && upstreamInc !== undefined) s.incarnation = upstreamInc;
    else if (opts.guard && s !== undefined && !s.lost) headers.push(HEADER_SESSION_INCARNATION, s.incarnation);
    const ct = (headerOf(ures.rawHeaders, 'content-type') ?? '').toLowerCase();
    const sse = ct.includes('text/event-stream');
    const isInit = opts.guard && rpcMethod === 'initialize' && s !== undefined && ok && upstreamInc === undefined;

    // ---- idle bound on the answer body ----
    const idle = new IdleBound(
      opts.streamIdleTimeoutMs,
      () => {
        stats.streamIdleTimeouts++;
        ures.destroy();
        res.destroy();
      },
      ctx.deadlines,
    );
    ures.on('close', () => idle.clear());
    ures.on('aborted', () => {
      if (!relay?.refused) res.destroy();
    });
    ures.on('error', () => {
      if (!relay?.refused) res.destroy();
      finish(!relay?.refused);
    });

    // ---- SSE events: recorded, judged against the session's log ----
    let judged: Continuity | undefined;
    const judge = (ev: SseEvent, print: number): Continuity => (judged ??= judgeEvent(s!.log, ev.id!, print, cursor));
    // One per exchange, renewed only when the session's incarnation changes mid-stream.
    let origin: EventOrigin | undefined;
    const onEvent = (ev: SseEvent): void => {
      // Read now only when it may answer a request; any other event when its span is emitted.
      const infos = mayAnswer(ev.data) ? describeEvent(ev.data, ev.frame, ev.dataStart) : undefined;
      let late = false;
      if (infos !== undefined) {
        if (infos[0]?.kind === 'none') stats.malformedSse++;
        for (const info of infos) if (answer(info, ev.id !== undefined && s !== undefined)) late = true;
      }
      if (ev.id === undefined) return;
      const info = infos === undefined ? undefined : (infos[0] ?? NO_MESSAGE);
      const at = epochNow();
      if (s === undefined) {
        ctx.history.record(undefined, sid, ev.id, ev.data, info, undefined, false, (origin ??= { incarnation: undefined, protocolVersion: pv }), at);
        return;
      }
      // Read off the chunk's bytes (sse-scan.ts): the hashes are taken, the strings its own.
      const scanned = (ev as Partial<ScannedEvent>).print !== undefined ? (ev as ScannedEvent) : undefined;
      const print = scanned !== undefined ? scanned.print : payloadPrint(ev.data);
      s.sendsIds = true;
      if (judged === undefined && s.log.size > 0) {
        const c = judge(ev, print);
        if (c === 'restarts') {
          // A new life of the id: the upstream rebuilt the session and its log.
          table.reincarnate(s);
          spans.created(s, { createdBy: method === 'POST' ? (rpcMethod ?? 'unknown') : method, clientSupplied: true, method, lastEventId: cursor, protocolVersion: pv }, arrivedAt);
          ctx.history.moment(s, true);
        }
        if (s.pendingResume !== undefined) settleResume(ctx, s, c);
      } else if (s.pendingResume !== undefined) {
        settleResume(ctx, s, 'unknown');
      }
      const replayed = scanned !== undefined ? s.log.addHashed(ev.id, scanned.idLo, scanned.idHi, print) : s.log.add(ev.id, print);
      if (origin === undefined || origin.incarnation !== s.incarnation) origin = { incarnation: s.incarnation, protocolVersion: pv };
      ctx.history.record(s, sid, scanned !== undefined ? ev.id : detach(ev.id), ev.data, info, s.log, replayed, origin, at, scanned !== undefined);
      if (late) ctx.history.moment(s, false);
    };
    if (isInit && s !== undefined) {
      ures.on('data', () => idle.touch());
      passInitialize(opts.maxInitializeBytes, ures, res, status, headers, sse, s.incarnation, (text) => {
        if (sse) for (const ev of new SseParser(opts.maxEventChars).push(text)) onEvent(ev);
        finish(false);
      });
      answered = true;
      return;
    }

    // The first answer after the upstream could not be reached: one without events to judge is probed.
    if (s !== undefined && ok && s.upstreamDown) {
      if (opts.guard && !sse && s.log.size > 0) probeAfterOutage(ctx, s, `${base}${req.url ?? '/'}`, { createdBy: method === 'POST' ? (rpcMethod ?? 'unknown') : method, method, protocolVersion: pv, at: arrivedAt });
      else s.upstreamDown = false;
    }
    if (!sse) {
      passPlain(ures, res, status, headers, ct.includes('json') && method === 'POST', opts.maxParseBytes, idle, (infos) => {
        answered = true;
        for (const info of infos) answer(info, false);
        finish(false);
      });
      return;
    }

    const hold =
      opts.guard && s !== undefined && ok && (cursor !== undefined || s.sendsIds) && s.log.size > 0
        ? { writeHead: () => res.writeHead(status, headers), ms: opts.guardHoldMs, maxChars: opts.maxEventChars, deadlines: ctx.deadlines }
        : undefined;
    if (hold === undefined) res.writeHead(status, headers);
    relay = new SseRelay(
      ures,
      res,
      {
        onEvent,
        decide: (ev) => refuseIfForked(judge(ev, printOf(ev))),
        // A resume that replayed nothing in the hold: ask the upstream for one event of the session.
        onHoldExpired: () => probeResume(),
      },
      opts.maxEventChars,
      hold,
      idle,
    );
    /** Under `--guard`: a held answer whose judged event forks is refused 404 (its new life recorded unless `minted` is false). */
    function refuseIfForked(c: Continuity, minted = true): 'pass' | 'refuse' {
      if (!forks(c)) return 'pass';
      s!.lost = true;
      // The client is spared the fork, but the upstream did mint: the record says so.
      if (c === 'restarts' && minted) {
        table.reincarnate(s!);
        spans.created(s!, { createdBy: method === 'POST' ? (rpcMethod ?? 'unknown') : method, clientSupplied: true, method, lastEventId: cursor, protocolVersion: pv }, arrivedAt);
        ctx.history.moment(s!, true);
      }
      if (s!.pendingResume !== undefined) {
        const r = s!.pendingResume;
        s!.pendingResume = undefined;
        spans.resume(s!, { ...r, status: 404 }, 'rejected_404', false);
      }
      refuse(ctx, res, cursor !== undefined ? 'resumeForked' : 'answerForked');
      answered = true;
      return 'refuse';
    }
    /**
     * A held resume that replayed nothing (the hold ran out, or the body ended): a rehydrated
     * session and a live one whose tool is silent look alike, so the upstream is asked for one
     * event of the session (resume-probe.ts) and that event judged. Undefined: nothing to ask.
     */
    function probeResume(): Promise<'pass' | 'refuse'> | undefined {
      if (cursor === undefined || s === undefined) return undefined;
      const session = s;
      return probeSession(ctx.agent, opts.upstreamUrl, `${base}${req.url ?? '/'}`, session.id, pv, opts.maxEventChars, opts.guardHoldMs).then((a) => {
        if (done || !relay?.holding) return 'pass';
        if (a.kind === 'gone') return refuseIfForked('restarts', false);
        return a.kind === 'event' ? refuseIfForked(judgeEvent(session.log, a.ev.id!, payloadPrint(a.ev.data), undefined)) : 'pass';
      });
    }
    const r = relay;
    if (hold === undefined) process.nextTick(flushHead, r);
    const ended = (): void => {
      if (r.refused) return finish(false);
      if (r.finish().truncated) stats.malformedSse++;
      stats.oversizeEvents += r.oversized;
      res.end();
      finish(false);
    };
    ures.on('end', () => {
      answered = true;
      if (r.refused) return;
      // A resume that ended without an event (a replay of nothing): judged by a probe first.
      r.stopTimer();
      const asked = r.holding ? probeResume() : undefined;
      if (asked === undefined) return ended();
      void asked.then((d) => {
        if (d === 'refuse') r.drop();
        ended();
      });
    });
  });
}
