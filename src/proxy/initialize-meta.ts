import { META_INCARNATION } from './building-blocks.js';

/**
 * Adds `_meta["forkwatch/incarnation"]` to the InitializeResult in a JSON-RPC message text (a
 * JSON answer body or one SSE event's data). Returns undefined when the text is not such a
 * result (it then goes out unchanged). Only under `--guard`.
 */
export function withIncarnationMeta(text: string, incarnation: string): string | undefined {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return undefined;
  const result = (msg as { result?: unknown }).result;
  if (!result || typeof result !== 'object' || typeof (result as { protocolVersion?: unknown }).protocolVersion !== 'string') return undefined;
  const r = result as { _meta?: Record<string, unknown> };
  r._meta = { ...(r._meta && typeof r._meta === 'object' ? r._meta : {}), [META_INCARNATION]: incarnation };
  return JSON.stringify(msg);
}

/** Rewrites the data lines of SSE events carrying an InitializeResult; other events unchanged. */
export function sseWithIncarnationMeta(body: string, incarnation: string): string {
  return body.replace(/((?:^|\n)data: ?)([^\n]*)/g, (all, prefix: string, data: string) => {
    const out = withIncarnationMeta(data, incarnation);
    return out === undefined ? all : `${prefix}${out}`;
  });
}
