import http from 'node:http';
import { HEADER_PROTOCOL_VERSION, HEADER_SESSION_ID, SseParser, type SseEvent } from './building-blocks.js';

/** What a probe learnt: the first id-bearing event of the answer, `gone` (404), or nothing. */
export type ProbeAnswer = { kind: 'event'; ev: SseEvent } | { kind: 'gone' } | { kind: 'none' };

let probes = 0;

/**
 * Under `--guard`, a resume answered 200 that replays nothing within `--guard-hold-ms` cannot be
 * judged from its own stream: a rehydrated session (a new life that lost the call) and a live one
 * whose tool is silent look the same. The proxy asks the upstream for one event of the session: a
 * JSON-RPC `ping` (every MCP server answers it) on the session, id `forkwatch-probe-<n>`, never
 * seen by the client. An upstream that numbers its events answers on an SSE stream with the next
 * id of the session's log (a live session) or an id of a log begun again (a new life). Resolves
 * within `timeoutMs`; never rejects.
 */
export function probeSession(
  agent: http.Agent,
  upstream: URL,
  path: string,
  sessionId: string,
  protocolVersion: string | undefined,
  maxEventChars: number,
  timeoutMs: number,
): Promise<ProbeAnswer> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (a: ProbeAnswer): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve(a);
    };
    const body = JSON.stringify({ jsonrpc: '2.0', id: `forkwatch-probe-${++probes}`, method: 'ping' });
    const headers: http.OutgoingHttpHeaders = {
      host: upstream.host,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'content-length': Buffer.byteLength(body),
      [HEADER_SESSION_ID]: sessionId,
    };
    if (protocolVersion !== undefined) headers[HEADER_PROTOCOL_VERSION] = protocolVersion;
    const req = http.request({ agent, host: upstream.hostname, port: upstream.port || 80, method: 'POST', path, headers }, (res) => {
      if (res.statusCode === 404) return finish({ kind: 'gone' });
      if (!String(res.headers['content-type'] ?? '').includes('text/event-stream')) return finish({ kind: 'none' });
      const parser = new SseParser(maxEventChars);
      res.setEncoding('utf8');
      res.on('data', (t: string) => {
        for (const ev of parser.push(t)) if (ev.id !== undefined) return finish({ kind: 'event', ev });
      });
      res.on('end', () => finish({ kind: 'none' }));
      res.on('error', () => finish({ kind: 'none' }));
    });
    const timer = setTimeout(() => finish({ kind: 'none' }), timeoutMs);
    timer.unref();
    req.on('error', () => finish({ kind: 'none' }));
    req.end(body);
  });
}
