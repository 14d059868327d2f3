/** What forkwatch records of a JSON-RPC message; payloads themselves are never recorded. */
export interface JsonRpcInfo {
  kind: 'request' | 'notification' | 'response' | 'error' | 'none';
  id?: string;
  method?: string;
  progressToken?: string;
  toolName?: string;
  /** `params._meta` when it names a `traceparent`: the trace context the sender propagated (SEP-414). */
  traceMeta?: Record<string, unknown>;
}

/** Messages larger than this (chars) are not parsed for ids; their kind is reported `none`. Default 1 MiB. */
export const DEFAULT_MAX_PARSE_CHARS = 1024 * 1024;

/** Classifies one JSON-RPC message (already parsed). Never throws. */
export function describeMessage(msg: unknown): JsonRpcInfo {
  if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return { kind: 'none' };
  const m = msg as Record<string, unknown>;
  const info: JsonRpcInfo = { kind: 'none' };
  const hasId = typeof m.id === 'string' || typeof m.id === 'number';
  if (hasId) info.id = String(m.id);
  if (typeof m.method === 'string') {
    info.kind = hasId ? 'request' : 'notification';
    info.method = m.method;
    const params = m.params && typeof m.params === 'object' ? (m.params as Record<string, unknown>) : undefined;
    if (params) {
      const meta = params._meta && typeof params._meta === 'object' ? (params._meta as Record<string, unknown>) : undefined;
      const token = m.method === 'notifications/progress' ? params.progressToken : meta?.progressToken;
      if (typeof token === 'string' || typeof token === 'number') info.progressToken = String(token);
      if (m.method === 'tools/call' && typeof params.name === 'string') info.toolName = params.name;
      if (meta !== undefined && typeof meta.traceparent === 'string') info.traceMeta = meta;
    }
  } else if ('result' in m) {
    info.kind = 'response';
  } else if ('error' in m) {
    info.kind = 'error';
  }
  return info;
}

/** Parses SSE data / a POST body and classifies it; arrays (batches) yield one info per element. */
export function describeText(text: string, maxChars = DEFAULT_MAX_PARSE_CHARS): JsonRpcInfo[] {
  if (text.length === 0 || text.length > maxChars) return [{ kind: 'none' }];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [{ kind: 'none' }];
  }
  return Array.isArray(parsed) ? parsed.map(describeMessage) : [describeMessage(parsed)];
}
