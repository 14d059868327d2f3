import type { IncomingMessage } from 'node:http';
import { describeText, type JsonRpcInfo } from './building-blocks.js';

/** A request a `notifications/cancelled` names, and whether its `reason` says the client timed out. */
export interface CancelledRequest {
  id: string;
  /**
   * The reason names a timeout (the TypeScript SDK sends `McpError: MCP error -32001: Request timed
   * out` when its request timeout fires; an app's abort sends the abort's reason instead).
   */
  timedOut: boolean;
}

/** A cancel `reason` that says the client gave up waiting, not that its app stopped the call. */
const TIMEOUT_REASON = /timed?[ _-]?out|-32001/i;

/**
 * The requests that the `notifications/cancelled` messages of a POST body name (`params.requestId`,
 * string form). The body is parsed again only when `infos` (its messages as the proxy already read
 * them) holds such a notification: other POSTs cost one scan of `infos`. Never throws; an
 * unreadable body names none.
 */
export function cancelledRequests(infos: readonly JsonRpcInfo[], body: string | undefined): CancelledRequest[] {
  if (body === undefined || !infos.some((i) => i.kind === 'notification' && i.method === 'notifications/cancelled')) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const out: CancelledRequest[] = [];
  for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
    if (!m || typeof m !== 'object') continue;
    const msg = m as { method?: unknown; params?: unknown };
    if (msg.method !== 'notifications/cancelled' || !msg.params || typeof msg.params !== 'object') continue;
    const { requestId: id, reason } = msg.params as { requestId?: unknown; reason?: unknown };
    if (typeof id === 'string' || typeof id === 'number') out.push({ id: String(id), timedOut: typeof reason === 'string' && TIMEOUT_REASON.test(reason.slice(0, 512)) });
  }
  return out;
}

/**
 * Reads a request's body that goes nowhere else (a POST the guard refuses) for the requests its
 * `notifications/cancelled` name, and hands them to `onIds` when it ends. A body over `maxBytes`
 * (`--max-parse-bytes`) is drained unread.
 */
export function readCancelled(req: IncomingMessage, maxBytes: number, onIds: (cancels: CancelledRequest[]) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= maxBytes) chunks.push(c);
  });
  req.on('end', () => {
    if (size > maxBytes) return;
    const text = Buffer.concat(chunks).toString('utf8');
    const ids = cancelledRequests(describeText(text, maxBytes), text);
    if (ids.length > 0) onIds(ids);
  });
  req.on('error', () => undefined);
}
