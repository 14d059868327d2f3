import http from 'node:http';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SseParser } from '@forkwatch/instrumentation/wire';
import { clock } from './transit-clock.js';

/** One call of the latency phase, ms: the whole call, the request's way in, each message's way out. */
export interface TimedCall {
  callMs: number;
  /** Client to the server's tool handler (the proxy's request path, the server SDK's parse). */
  requestMs: number;
  /** Each progress notification's, then the answer's: from the server's send to its bytes' arrival. */
  messageMs: number[];
  /** Their keys in a capture (wire-capture.ts): `m:` and the stamp, as the server wrote it. */
  messageKeys: string[];
  /** The request's key in a capture: `r:` and its `sentAt`, as written in its body. */
  requestKey: string;
}

/** A session a stock SDK client opened through one variant, called on the wire by {@link wireCall}. */
export interface WireSession {
  port: number;
  sessionId: string;
  protocolVersion: string;
  agent: http.Agent;
}

/** The session `client` holds (it initialized it through the proxy on `port`). */
export function wireSession(client: Client, port: number): WireSession {
  const t = client.transport as StreamableHTTPClientTransport | undefined;
  if (t?.sessionId === undefined) throw new Error('wire session: the client holds no session id');
  return { port, sessionId: t.sessionId, protocolVersion: t.protocolVersion ?? '2025-06-18', agent: new http.Agent({ keepAlive: true, maxSockets: 1 }) };
}

let nextId = 1_000_000_000;

/**
 * A `progress` call to bench/sidecar/upstream-main.ts sent and read on the wire: each message's
 * arrival is the moment its chunk came off the socket, before any parsing. A stock SDK client reads
 * an event through fetch's body stream, an SSE parser and a schema, and its own collector's pauses
 * land in every message it was about to read: that was most of a message's p99 (8.5 ms at 5
 * notifications through the bare pipe, the same client and server: 2026-12-07) and widened the
 * interval of the p99 added past the goal it judges. The call's `sentAt` and the server's stamps
 * are read as before. Rejects when an answer or a notification is missing: the phase pairs messages
 * call by call, variant by variant.
 */
export function wireCall(s: WireSession, n: number): Promise<TimedCall> {
  const id = nextId++;
  const t0 = clock();
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'progress', arguments: { n, sentAt: t0 }, _meta: { progressToken: id } } });
  return new Promise<TimedCall>((resolve, reject) => {
    const messageMs: number[] = [];
    const messageKeys: string[] = [];
    let requestMs = Number.NaN;
    let end = Number.NaN;
    const sse = new SseParser();
    const read = (text: string, at: number): void => {
      for (const ev of sse.push(text)) {
        if (ev.data === '') continue;
        const m = JSON.parse(ev.data) as { id?: number; method?: string; params?: { message?: string }; result?: { content?: { text?: string }[] } };
        if (m.method === 'notifications/progress') {
          messageMs.push(at - Number(m.params?.message));
          messageKeys.push(`m:${m.params?.message}`);
        } else if (m.id === id) {
          const [, , req, leftAt] = (m.result?.content?.[0]?.text ?? '').split(' ');
          requestMs = Number(req);
          messageMs.push(at - Number(leftAt));
          messageKeys.push(`m:${leftAt}`);
          end = at;
        }
      }
    };
    const req = http.request(
      {
        agent: s.agent,
        host: '127.0.0.1',
        port: s.port,
        method: 'POST',
        path: '/mcp',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': s.sessionId,
          'mcp-protocol-version': s.protocolVersion,
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          const at = clock();
          try {
            read(text, at);
          } catch (err) {
            reject(err as Error);
            res.destroy();
          }
        });
        res.on('end', () => {
          // A message without its stamp (NaN) is as missing as one that never came.
          if (res.statusCode !== 200 || Number.isNaN(end) || Number.isNaN(requestMs) || messageMs.length !== n + 1 || messageMs.some(Number.isNaN)) {
            reject(new Error(`wire call: status ${res.statusCode}, ${messageMs.length} of ${n + 1} messages, request ${requestMs}`));
          } else resolve({ callMs: end - t0, requestMs, messageMs, messageKeys, requestKey: `r:${JSON.stringify(t0)}` });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
