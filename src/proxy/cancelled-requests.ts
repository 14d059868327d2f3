import type { IncomingMessage } from 'node:http';
import { describeText, type JsonRpcInfo } from './building-blocks.js';

/**
 * Ids of the requests that the `notifications/cancelled` messages of a POST body name
 * (`params.requestId`, string form). The body is parsed again only when `infos` (its messages as
 * the proxy already read them) holds such a notification: other POSTs cost one scan of `infos`.
 * Never throws; an unreadable body names none.
 */
export function cancelledRequestIds(infos: readonly JsonRpcInfo[], body: string | undefined): string[] {
  if (body === undefined || !infos.some((i) => i.kind === 'notification' && i.method === 'notifications/cancelled')) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
    if (!m || typeof m !== 'object') continue;
    const msg = m as { method?: unknown; params?: unknown };
    if (msg.method !== 'notifications/cancelled' || !msg.params || typeof msg.params !== 'object') continue;
    const id = (msg.params as { requestId?: unknown }).requestId;
    if (typeof id === 'string' || typeof id === 'number') out.push(String(id));
  }
  return out;
}

/**
 * Reads a request's body that goes nowhere else (a POST the guard refuses) for the requests its
 * `notifications/cancelled` name, and hands them to `onIds` when it ends. A body over `maxBytes`
 * (`--max-parse-bytes`) is drained unread.
 */
export function readCancelledIds(req: IncomingMessage, maxBytes: number, onIds: (ids: string[]) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= maxBytes) chunks.push(c);
  });
  req.on('end', () => {
    if (size > maxBytes) return;
    const text = Buffer.concat(chunks).toString('utf8');
    const ids = cancelledRequestIds(describeText(text, maxBytes), text);
    if (ids.length > 0) onIds(ids);
  });
  req.on('error', () => undefined);
}
