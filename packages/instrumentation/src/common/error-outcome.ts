/**
 * How an MCP SDK error rejected a request, read structurally so it works for SDK 1.x (`McpError`,
 * numeric codes) and 2.x (`SdkError`, string codes; `ProtocolError` for JSON-RPC errors) without
 * importing either (a v2 app must not need the v1 package, nor the reverse).
 * `undefined`: not an SDK error.
 */
export function sdkErrorOutcome(err: unknown): 'timeout' | 'transport_error' | 'error' | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  const data = (err as { data?: unknown }).data;
  if (typeof code === 'number') {
    // 1.x McpError: -32001 RequestTimeout (with the timeout in data), -32000 ConnectionClosed.
    if (err.name !== 'McpError' && err.name !== 'ProtocolError' && !/^MCP error/.test(err.message)) return undefined;
    if (code === -32001 && data !== null && typeof data === 'object' && ('timeout' in data || 'maxTotalTimeout' in data)) return 'timeout';
    if (code === -32000 && /Connection closed/.test(err.message)) return 'transport_error';
    return 'error';
  }
  if (typeof code === 'string' && err.name === 'SdkError') {
    if (code === 'REQUEST_TIMEOUT') return 'timeout';
    if (code === 'CONNECTION_CLOSED') return 'transport_error';
    return 'error';
  }
  return undefined;
}
