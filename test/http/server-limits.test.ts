import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createApiServer } from '../../src/http/api-server.js';
import { createOtlpServer } from '../../src/http/otlp-server.js';
import { openStore } from '../../src/storage/open-store.js';

/** Sends headers announcing `len` bytes, then one body byte every `everyMs`; resolves when the server closes, with what it said. */
function slowBody(port: number, path: string, everyMs: number, giveUpMs: number, slowHeaders = false): Promise<{ closedAfterMs: number; text: string }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const sock = connect({ host: '127.0.0.1', port });
    let text = '';
    sock.setEncoding('latin1');
    sock.on('data', (d: string) => (text += d));
    sock.write(
      slowHeaders
        ? `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: `
        : `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-protobuf\r\nContent-Length: 1000\r\n\r\n`,
    );
    const drip = setInterval(() => sock.write('x'), everyMs);
    const giveUp = setTimeout(() => {
      sock.destroy();
      reject(new Error(`still open after ${giveUpMs} ms`));
    }, giveUpMs);
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearInterval(drip);
      clearTimeout(giveUp);
      resolve({ closedAfterMs: Date.now() - t0, text });
    });
  });
}

test('a body or headers sent one byte at a time are cut at the request/headers timeouts on both ports; the connection limit is applied', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-limits-'));
  const store = openStore({ path: join(dir, 'fw.db') });
  const limits = { requestTimeoutMs: 1500, headersTimeoutMs: 1000, maxConnections: 7 };
  const otlp = await createOtlpServer({ sink: { offer: () => Promise.resolve() }, ...limits });
  const api = await createApiServer({ store, lineage: () => undefined, ready: () => true, ...limits });
  t.after(async () => {
    await otlp.close();
    await api.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const port = async (app: FastifyInstance): Promise<number> => {
    await app.listen({ host: '127.0.0.1', port: 0 });
    return (app.server.address() as { port: number }).port;
  };
  for (const [app, path] of [
    [otlp, '/v1/traces'],
    [api, '/healthz'],
  ] as const) {
    assert.equal(app.server.maxConnections, 7);
    // The old servers kept such a client for as long as it dripped (Node checks every 30 s at best).
    const p = await port(app);
    const body = await slowBody(p, path, 200, 20_000);
    assert.match(body.text, /^HTTP\/1\.1 (408|4\d\d)/, path);
    if (path === '/v1/traces') assert.match(body.text, /^HTTP\/1\.1 408/, path);
    const headers = await slowBody(p, path, 200, 20_000, true);
    assert.match(headers.text, /^HTTP\/1\.1 408/, `${path}: slow headers`);
  }
});
