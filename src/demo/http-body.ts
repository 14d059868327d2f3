import type http from 'node:http';

/** Largest JSON body the demo servers read, bytes. Default 4 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

export type JsonBodyResult = { ok: true; value: unknown } | { ok: false; status: number; reason: string };

/** Reads and parses a JSON request body, bounded by `maxBytes` (default 4 MiB). Never throws. */
export async function readJsonBody(req: http.IncomingMessage, maxBytes = DEFAULT_MAX_BODY_BYTES): Promise<JsonBodyResult> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      const b = chunk as Buffer;
      size += b.length;
      if (size > maxBytes) return { ok: false, status: 413, reason: `body exceeds ${maxBytes} bytes` };
      chunks.push(b);
    }
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { ok: false, status: 400, reason: 'Parse error: Invalid JSON' };
  }
}

/** Answers a JSON-RPC error object (id null) with an HTTP status, as the SDK's transport does. */
export function sendJsonRpcError(res: http.ServerResponse, status: number, code: number, message: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
