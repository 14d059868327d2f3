import { describeMessage, type JsonRpcInfo } from '../common/jsonrpc-info.js';
import { META_INCARNATION } from '../semconv.js';

/** What the client side reads of one JSON-RPC message: enough to match it and to learn an incarnation. */
export interface MessageInfo extends JsonRpcInfo {
  /** `params.progress` of a progress notification (tells two progress events of one token apart). */
  progress?: number;
  /** `result._meta["forkwatch/incarnation"]` of an InitializeResult. */
  incarnation?: string;
}

/** Classifies a parsed message. Never throws. */
export function inspectMessage(msg: unknown): MessageInfo {
  const info: MessageInfo = describeMessage(msg);
  if (!msg || typeof msg !== 'object') return info;
  const m = msg as Record<string, unknown>;
  if (info.kind === 'notification' && m.params && typeof m.params === 'object') {
    const p = (m.params as Record<string, unknown>).progress;
    if (typeof p === 'number') info.progress = p;
  } else if (info.kind === 'response' && m.result && typeof m.result === 'object') {
    const r = m.result as Record<string, unknown>;
    const meta = r._meta && typeof r._meta === 'object' ? (r._meta as Record<string, unknown>) : undefined;
    const inc = meta?.[META_INCARNATION];
    if (typeof inc === 'string' && inc.length > 0 && inc.length <= 256 && 'protocolVersion' in r) info.incarnation = inc;
  }
  return info;
}

/** Parses SSE data (one message) and classifies it; `none` for empty, oversized or invalid data. */
export function inspectData(data: string, maxChars: number): MessageInfo {
  if (data.length === 0 || data.length > maxChars) return { kind: 'none' };
  try {
    return inspectMessage(JSON.parse(data));
  } catch {
    return { kind: 'none' };
  }
}

/** Whether a delivered message is the one a wire event carried (same kind, id, method, token, progress). */
export function sameMessage(a: MessageInfo, b: MessageInfo): boolean {
  return a.kind === b.kind && a.id === b.id && a.method === b.method && a.progressToken === b.progressToken && a.progress === b.progress;
}
