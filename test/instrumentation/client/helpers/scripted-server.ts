import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';

/** A handle on one SSE response of the scripted server. */
export interface SseWriter {
  /** Writes an event; `message` undefined writes an empty (priming) event. */
  event(id: string, message?: unknown): void;
  /** Destroys the socket: a network cut, as a partition does. */
  cut(): void;
  end(): void;
}

export interface ToolCallContext {
  sessionId: string;
  /** 0 for the first tools/call the server sees, across sessions. */
  callIndex: number;
  requestId: number | string;
  progressToken: string | number | undefined;
  /** Answers 200 text/event-stream with the session's headers (plus `extra`). */
  open(extra?: OutgoingHttpHeaders): SseWriter;
  res: ServerResponse;
}

export interface ResumeContext {
  sessionId: string | undefined;
  lastEventId: string;
  /** Answers 200 text/event-stream with the session's headers (plus `extra`, which may override them). */
  open(extra?: OutgoingHttpHeaders): SseWriter;
  /** Answers `status` with a JSON-RPC error body. */
  reject(status: number, code?: number, message?: string): void;
}

export interface Script {
  /** Incarnation sent on initialize (header and `_meta`) and on every response; none when undefined. */
  incarnation?: string;
  /** Send the incarnation as a header too (else only in the InitializeResult `_meta`). Default true. */
  incarnationHeader?: boolean;
  onToolCall(ctx: ToolCallContext): void;
  onResume?(ctx: ResumeContext): void;
}

export interface ScriptedServer {
  url: URL;
  /** Session ids minted, in order (`sess-1`, `sess-2`, ...). */
  sessions: string[];
  /** Methods and Last-Event-IDs of requests seen, for assertions. */
  log: Array<{ method: string; rpc?: string; lastEventId?: string; sessionId?: string }>;
  close(): Promise<void>;
}

/**
 * A hand-scripted MCP Streamable HTTP server on 127.0.0.1:0: enough of the protocol for the SDK
 * client (initialize as JSON, 202 for notifications, 405 for a plain GET), with tools/call and
 * resumes answered by the test's script, so it can misbehave exactly as the seed's servers did.
 */
export async function startScriptedServer(script: Script): Promise<ScriptedServer> {
  const sessions: string[] = [];
  const log: ScriptedServer['log'] = [];
  let calls = 0;
  const baseHeaders = (sessionId: string | undefined): OutgoingHttpHeaders => ({
    ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
    ...(script.incarnation && script.incarnationHeader !== false ? { 'mcp-session-incarnation': script.incarnation } : {}),
  });
  const writer = (res: ServerResponse): SseWriter => ({
    event(id, message) {
      res.write(`id: ${id}\nevent: message\ndata: ${message === undefined ? '' : JSON.stringify(message)}\n\n`);
    },
    cut() {
      res.socket?.destroy();
    },
    end() {
      res.end();
    },
  });
  const openSse = (res: ServerResponse, headers: OutgoingHttpHeaders): SseWriter => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
    res.flushHeaders();
    return writer(res);
  };

  const http: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const sid = typeof req.headers['mcp-session-id'] === 'string' ? req.headers['mcp-session-id'] : undefined;
    const lastEventId = typeof req.headers['last-event-id'] === 'string' ? req.headers['last-event-id'] : undefined;
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: number | string; method?: string; params?: any };
      log.push({ method: 'POST', rpc: msg.method, sessionId: sid });
      if (msg.method === 'initialize') {
        const id = `sess-${sessions.length + 1}`;
        sessions.push(id);
        const result = {
          protocolVersion: msg.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'scripted', version: '1.0.0' },
          ...(script.incarnation ? { _meta: { 'forkwatch/incarnation': script.incarnation } } : {}),
        };
        res.writeHead(200, { 'content-type': 'application/json', ...baseHeaders(id) }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
        return;
      }
      if (msg.id === undefined) {
        res.writeHead(202, baseHeaders(sid)).end();
        return;
      }
      if (msg.method === 'tools/call') {
        script.onToolCall({
          sessionId: sid ?? '',
          callIndex: calls++,
          requestId: msg.id,
          progressToken: msg.params?._meta?.progressToken,
          open: (extra) => openSse(res, { ...baseHeaders(sid), ...extra }),
          res,
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', ...baseHeaders(sid) }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: {} }));
      return;
    }
    log.push({ method: req.method ?? '', lastEventId, sessionId: sid });
    if (req.method === 'GET' && lastEventId && script.onResume) {
      script.onResume({
        sessionId: sid,
        lastEventId,
        open: (extra) => openSse(res, { ...baseHeaders(sid), ...extra }),
        reject: (status, code = -32001, message = 'Session not found') =>
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null })),
      });
      return;
    }
    if (req.method === 'DELETE') {
      res.writeHead(200).end();
      return;
    }
    res.writeHead(405, { allow: 'POST, DELETE' }).end();
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const port = (http.address() as { port: number }).port;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    sessions,
    log,
    async close() {
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}

/** A progress notification as a server sends it. */
export function progress(token: string | number | undefined, n: number): unknown {
  return { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: n, total: 3 } };
}

/** A tools/call result. */
export function toolResult(id: number | string, text: string): unknown {
  return { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } };
}
