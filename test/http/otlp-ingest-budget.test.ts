import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { createOtlpServer } from '../../src/http/otlp-server.js';
import type { OtlpRequestOutcome } from '../../src/http/otlp-server.js';
import { IngestBudget } from '../../src/otlp/ingest-budget.js';
import { rawRequest } from './helpers/raw-http.js';

const HEAD = (len: number | 'chunked'): string =>
  [
    'POST /v1/traces HTTP/1.1',
    'Host: 127.0.0.1',
    'Content-Type: application/x-protobuf',
    len === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${len}`,
  ].join('\r\n');

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('past the bytes-in-flight budget: 429 + Retry-After before the body is read; chunked bodies counted as read; bytes given back', async (t) => {
  const budget = new IngestBudget(1024 * 1024);
  const outcomes: OtlpRequestOutcome[] = [];
  const app = await createOtlpServer({ sink: { offer: () => Promise.resolve() }, budget, onRequest: (o) => outcomes.push(o) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());
  const port = (app.server.address() as { port: number }).port;

  // A holds 600 KB of budget: it announced its body and sends it slowly.
  const a: Socket = connect({ host: '127.0.0.1', port });
  t.after(() => a.destroy());
  a.write(`${HEAD(600_000)}\r\n\r\n`);
  a.write(Buffer.alloc(1000));
  await until(() => budget.inFlight === 600_000, 'the first lease');

  // B announces 600 KB more and sends nothing: refused at once, its body never read.
  const b = await rawRequest(port, HEAD(600_000));
  assert.equal(b.status, 429);
  assert.match(b.text, /\r\nretry-after: 2\r\n/i);
  assert.match(b.text, /FORKWATCH_ERR_INGEST_BUDGET/);

  // C is chunked: admitted at 0 bytes, refused once what it has sent passes the budget.
  const chunk = Buffer.alloc(100_000, 1);
  const chunks = Array.from({ length: 6 }, () => `${chunk.length.toString(16)}\r\n${chunk.toString('latin1')}\r\n`).join('');
  const c = await rawRequest(port, HEAD('chunked'), `${chunks}0\r\n\r\n`);
  assert.equal(c.status, 429);
  assert.equal(budget.inFlight, 600_000, "C's bytes went back");

  a.destroy();
  await until(() => budget.inFlight === 0, "A's lease to be released when its client went away");
  const d = await rawRequest(port, HEAD(0));
  assert.equal(d.status, 200);
  assert.ok(budget.refused >= 2);
  assert.deepEqual(
    outcomes.filter((o) => o.status === 429).map((o) => o.reason),
    ['overloaded', 'overloaded'],
  );
});
