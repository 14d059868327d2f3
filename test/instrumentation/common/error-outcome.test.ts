import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sdkErrorOutcome } from '../../../packages/instrumentation/src/common/error-outcome.js';

describe('sdkErrorOutcome', () => {
  it('reads 1.x McpError and 2.x SdkError structurally', () => {
    const mcp = Object.assign(new Error('MCP error -32001: Request timed out'), { name: 'McpError', code: -32001, data: { timeout: 10 } });
    assert.equal(sdkErrorOutcome(mcp), 'timeout');
    const closed = Object.assign(new Error('MCP error -32000: Connection closed'), { name: 'McpError', code: -32000 });
    assert.equal(sdkErrorOutcome(closed), 'transport_error');
    assert.equal(sdkErrorOutcome(Object.assign(new Error('MCP error -32602: bad'), { name: 'McpError', code: -32602 })), 'error');
    assert.equal(sdkErrorOutcome(Object.assign(new Error('timed out'), { name: 'SdkError', code: 'REQUEST_TIMEOUT' })), 'timeout');
    assert.equal(sdkErrorOutcome(Object.assign(new Error('closed'), { name: 'SdkError', code: 'CONNECTION_CLOSED' })), 'transport_error');
    assert.equal(sdkErrorOutcome(new TypeError('fetch failed')), undefined);
    assert.equal(sdkErrorOutcome(Object.assign(new Error('ECONNRESET'), { code: 'ECONNRESET' })), undefined);
  });
});

describe('sdkErrorOutcome with the real SDK error classes', () => {
  it('1.x McpError and 2.x SdkError', async () => {
    const { McpError, ErrorCode } = await import('@modelcontextprotocol/sdk/types.js');
    const { SdkError, SdkErrorCode } = await import('@modelcontextprotocol/client');
    assert.equal(sdkErrorOutcome(new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: 5 })), 'timeout');
    assert.equal(sdkErrorOutcome(new McpError(ErrorCode.ConnectionClosed, 'Connection closed')), 'transport_error');
    assert.equal(sdkErrorOutcome(new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out')), 'timeout');
    assert.equal(sdkErrorOutcome(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed')), 'transport_error');
  });
});
