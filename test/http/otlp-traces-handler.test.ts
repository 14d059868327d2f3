import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { createOtlpServer, type OtlpRequestOutcome, type OtlpServerOptions } from '../../src/http/otlp-server.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { IngestBudget } from '../../src/otlp/ingest-budget.js';
import { ATTR_SIDE, SPAN_RESUME, SPAN_SSE_EVENT } from '../../packages/instrumentation/src/semconv.js';
import { makeSdkSpans, serialize, sseEventAttributes } from '../otlp/sdk-spans.js';

const TOKEN = 'handler-test-token';

interface Harness {
  app: FastifyInstance;
  port: number;
  budget: IngestBudget;
  offered: SpanRecord[][];
  outcomes: OtlpRequestOutcome[];
}

async function start(t: { after(fn: () => unknown): void }, opts: Partial<OtlpServerOptions> = {}): Promise<Harness> {
  const budget = new IngestBudget(1024 * 1024);
  const offered: SpanRecord[][] = [];
  const outcomes: OtlpRequestOutcome[] = [];
  const app = await createOtlpServer({
    sink: {
      offer(spans) {
        offered.push(spans);
        return Promise.resolve();
      },
    },
    budget,
    onRequest: (o) => outcomes.push(o),
    ...opts,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());
  return { app, port: (app.server.address() as { port: number }).port, budget, offered, outcomes };
}

function protobufBody(): Buffer {
  const spans = makeSdkSpans([
    { name: SPAN_SSE_EVENT, attributes: sseEventAttributes(1) },
    { name: SPAN_RESUME, attributes: { [ATTR_SIDE]: 'client' } },
    { name: 'GET /mcp', attributes: { 'http.route': '/mcp' } },
  ]);
  return Buffer.from(serialize(spans).protobuf);
}

/**
 * Writes `parts` one by one (`gapMs` apart) on a fresh connection, then, unless `hangUp`, waits
 * for the server to close it; resolves with everything the server said.
 */
function exchange(port: number, parts: Array<string | Buffer>, { gapMs = 20, hangUp = false } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port });
    const got: Buffer[] = [];
    const giveUp = setTimeout(() => {
      sock.destroy();
      reject(new Error('no close within 10 s'));
    }, 10_000);
    sock.on('data', (c: Buffer) => got.push(c));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearTimeout(giveUp);
      resolve(Buffer.concat(got).toString('latin1'));
    });
    let i = 0;
    const next = (): void => {
      if (i < parts.length) {
        sock.write(parts[i++]!);
        setTimeout(next, gapMs);
      } else if (hangUp) sock.destroy();
    };
    next();
  });
}

const head = (target: string, extra: string[]): string =>
  [`POST ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Content-Type: application/x-protobuf', 'Connection: close', ...extra].join('\r\n') + '\r\n\r\n';

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('a body arriving in pieces, with and without Content-Length, is read whole; the direct and the fastify route answer alike', async (t) => {
  const h = await start(t, { authToken: TOKEN });
  const body = protobufBody();
  const auth = `Authorization: Bearer ${TOKEN}`;
  const pieces = [body.subarray(0, 7), body.subarray(7, 40), body.subarray(40)];
  const chunked = pieces.map((p) => Buffer.concat([Buffer.from(`${p.length.toString(16)}\r\n`), p, Buffer.from('\r\n')]));
  const answers: string[] = [];
  // `/v1/traces` is served by node:http directly; `?via=fastify` (and any other spelling) by the fastify route.
  for (const target of ['/v1/traces', '/v1/traces?via=fastify']) {
    answers.push(await exchange(h.port, [head(target, [auth, `Content-Length: ${body.length}`]), ...pieces]));
    answers.push(await exchange(h.port, [head(target, [auth, 'Transfer-Encoding: chunked']), ...chunked, '0\r\n\r\n']));
    answers.push(await exchange(h.port, [head(target, [`Content-Length: ${body.length}`])]));
  }
  const strip = (a: string): string => a.replace(/\r\ndate: [^\r]*/i, '');
  for (const a of answers.slice(0, 3)) assert.match(a, /^HTTP\/1\.1 (200|401)/);
  assert.deepEqual(answers.slice(3).map(strip), answers.slice(0, 3).map(strip));
  assert.match(answers[2]!, /^HTTP\/1\.1 401[^]*www-authenticate: Bearer/i);
  assert.equal(h.offered.length, 4);
  for (const spans of h.offered) assert.deepEqual(spans.map((s) => s.name), [SPAN_SSE_EVENT, SPAN_RESUME]);
  assert.deepEqual(
    h.outcomes.map((o) => `${o.status} ${o.spans} ${o.foreign}`),
    ['200 2 1', '200 2 1', '401 0 0', '200 2 1', '200 2 1', '401 0 0'],
  );
  assert.equal(h.budget.inFlight, 0);
});

test('a client that announces more than it sends and goes away: 400 decode_error counted, its bytes given back', async (t) => {
  const h = await start(t);
  const body = protobufBody();
  await exchange(h.port, [head('/v1/traces', [`Content-Length: ${body.length + 100}`]), body], { hangUp: true });
  await exchange(h.port, [head('/v1/traces', ['Transfer-Encoding: chunked']), `${body.length.toString(16)}\r\n`, body], { hangUp: true });
  await until(() => h.outcomes.length === 2 && h.budget.inFlight === 0, 'both outcomes and the leases back');
  assert.deepEqual(
    h.outcomes.map((o) => `${o.status} ${o.reason}`),
    ['400 decode_error', '400 decode_error'],
  );
  assert.equal(h.offered.length, 0);
});

test('a client that announces less than it sends: its body ends at Content-Length and the rest is not a request', async (t) => {
  const h = await start(t);
  const body = protobufBody();
  const text = await exchange(h.port, [head('/v1/traces', ['Content-Length: 5']), body]);
  // What follows the 5 bytes is not HTTP: the server answers 400 and closes; nothing is ingested.
  assert.match(text, /^HTTP\/1\.1 400 /);
  assert.equal(h.offered.length, 0);
  await until(() => h.outcomes.length === 1 && h.budget.inFlight === 0, 'the outcome and the lease back');
  assert.equal(h.outcomes[0]!.status, 400);
});

test('a client that stops sending its body is cut at the request timeout and its bytes are given back', async (t) => {
  const h = await start(t, { requestTimeoutMs: 1000, headersTimeoutMs: 1000 });
  const body = protobufBody();
  const text = await exchange(h.port, [head('/v1/traces', [`Content-Length: ${body.length}`]), body.subarray(0, 10)]);
  assert.match(text, /^HTTP\/1\.1 408 /);
  await until(() => h.budget.inFlight === 0, 'the lease back');
  assert.equal(h.offered.length, 0);
});

test('with a logger every request goes through fastify, with the same answers', async (t) => {
  const lines: string[] = [];
  const stream = { write: (l: string) => lines.push(l) };
  const h = await start(t, { logger: { level: 'info', stream } });
  const body = protobufBody();
  const text = await exchange(h.port, [head('/v1/traces', [`Content-Length: ${body.length}`]), body]);
  assert.match(text, /^HTTP\/1\.1 200 /);
  assert.equal(h.offered.length, 1);
  // fastify logs the requests it serves: this one went through it.
  assert.ok(lines.some((l) => /"url":"\/v1\/traces"/.test(l)), lines.join(''));
});

test('while closing, a request the direct path would serve goes to fastify, which answers 503 and closes; the request in flight finishes', async (t) => {
  const h = await start(t);
  const body = protobufBody();
  const keepAlive = (n: number): string =>
    [`POST /v1/traces HTTP/1.1`, 'Host: 127.0.0.1', 'Content-Type: application/x-protobuf', `Content-Length: ${n}`].join('\r\n') + '\r\n\r\n';
  const sock = connect({ host: '127.0.0.1', port: h.port });
  t.after(() => sock.destroy());
  let said = '';
  sock.on('data', (c: Buffer) => (said += c.toString('latin1')));
  const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
  // A request whose body is still arriving keeps the connection busy, so close() does not drop it as idle.
  sock.write(keepAlive(body.length) + body.subarray(0, 10).toString('latin1'), 'latin1');
  await until(() => h.budget.inFlight > 0, 'the first request to be read');
  const closing = h.app.close();
  // fastify stops the listener after its preClose hooks, among them the one that routes new requests to it.
  await until(() => !h.app.server.listening, 'the listener to stop');
  // The rest of the first body, and a second request on the same connection.
  sock.write(Buffer.concat([body.subarray(10), Buffer.from(keepAlive(body.length), 'latin1'), body]));
  await closed;
  await closing;
  const answers = said.match(/^HTTP\/1\.1 \d+/gm) ?? [];
  assert.deepEqual(answers, ['HTTP/1.1 200', 'HTTP/1.1 503'], said);
  assert.match(said.slice(said.lastIndexOf('HTTP/1.1 503')), /connection: close/i);
  // The request in flight reached the sink; the second one did not.
  assert.equal(h.offered.length, 1);
});
