import type { ServerResponse } from 'node:http';

/**
 * Answers `status` with a JSON-RPC error `{"jsonrpc":"2.0","error":{code,message,data?},"id":null}`
 * as the SDK's transport does. No-op when headers were already sent.
 */
export function writeJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  data?: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  const error: { code: number; message: string; data?: unknown } = { code, message };
  if (data !== undefined) error.data = data;
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error, id: null }));
}
