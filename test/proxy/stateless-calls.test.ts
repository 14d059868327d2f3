import { test } from 'node:test';
import assert from 'node:assert/strict';
import { trace } from '@opentelemetry/api';
import { BrokenCalls, callShape, statelessDetails } from '../../src/proxy/stateless-calls.js';

const call = (id: number, args: unknown, meta?: unknown): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'charge', arguments: args, ...(meta ? { _meta: meta } : {}) } });

test('statelessDetails: the digest ignores _meta and the id; the client trace is kept, a fresh one made without it', () => {
  const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  const a = statelessDetails(call(0, { cents: 5 }, { progressToken: 0, traceparent: tp }), '0')!;
  const b = statelessDetails(call(7, { cents: 5 }), '7')!;
  assert.equal(a.digest, b.digest, 'a re-issue repeats the digest under a new id');
  assert.notEqual(statelessDetails(call(1, { cents: 6 }), '1')!.digest, a.digest);
  assert.equal(trace.getSpanContext(a.ctx)?.traceId, '0af7651916cd43dd8448eb211c80319c');
  const fresh = trace.getSpanContext(b.ctx)!;
  assert.match(fresh.traceId, /^[0-9a-f]{32}$/);
  assert.notEqual(fresh.traceId, '0'.repeat(32));
  assert.notEqual(trace.getSpanContext(statelessDetails(call(7, {}), '7')!.ctx)!.traceId, fresh.traceId, 'one trace per call');
});

test('statelessDetails: a batch is searched by id; bad bodies and malformed traceparents never throw', () => {
  const batch = `[${call(1, { a: 1 })},${call(2, { a: 2 })}]`;
  assert.equal(statelessDetails(batch, '2')!.digest, statelessDetails(call(9, { a: 2 }), '9')!.digest);
  assert.equal(statelessDetails('{not json', '1'), undefined);
  assert.equal(statelessDetails(call(1, {}), '2'), undefined);
  const bad = statelessDetails(call(1, {}, { traceparent: '00-' + '0'.repeat(32) + '-b7ad6b7169203331-01' }), '1')!;
  assert.notEqual(trace.getSpanContext(bad.ctx)!.traceId, '0'.repeat(32));
});

test('BrokenCalls: a re-issue counts within the window only, and the bound forgets the oldest', () => {
  const b = new BrokenCalls(1000, 2);
  const info = { kind: 'request' as const, id: '0', method: 'tools/call', toolName: 'charge' };
  b.broke(callShape(info, 'd1'), 10_000);
  assert.equal(b.reissues(callShape(info, 'd1'), 10_500), true);
  assert.equal(b.reissues(callShape(info, 'd2'), 10_500), false, 'other arguments: another call');
  assert.equal(b.reissues(callShape({ ...info, toolName: 'refund' }, 'd1'), 10_500), false);
  assert.equal(b.reissues(callShape(info, 'd1'), 9_000), false, 'sent before the break');
  b.broke(callShape(info, 'd2'), 10_100);
  b.broke(callShape(info, 'd3'), 10_200);
  assert.equal(b.size, 2);
  assert.equal(b.reissues(callShape(info, 'd1'), 10_300), false, 'forgotten past the bound');
  assert.equal(b.reissues(callShape(info, 'd3'), 11_300), false, 'past the window');
  assert.equal(b.size, 0, 'expired shapes are dropped');
});
