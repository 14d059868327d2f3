import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { connect } from 'node:net';
import { startDetector } from './helpers/detector.js';

// Issue 25 items 5, 6 and 8 against `forkwatch serve --peers` as a real process; the peer is a
// plain node:http server recording what reaches it (test/http/api-peers-hostile.test.ts has the
// size limit and more targets).

const TOKEN = 'e2e-peers-token-0123456789';

test('a real detector with --peers: a raw \\..\\ key never reaches another path of the peer, a # never drops the fan-out mark, a redirect is not followed', async (t) => {
  const seen: Array<{ url: string; fanOut: string | undefined; auth: string | undefined }> = [];
  let redirect = false;
  const peer = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', fanOut: req.headers['x-forkwatch-fan-out'] as string | undefined, auth: req.headers.authorization });
    if (redirect) return res.writeHead(302, { location: '/elsewhere' }).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: [], nextCursor: null }));
  });
  await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
  t.after(() => {
    peer.closeAllConnections();
    return new Promise<void>((r) => peer.close(() => r()));
  });
  const peerUrl = `http://127.0.0.1:${(peer.address() as { port: number }).port}`;
  const d = await startDetector({ args: ['--auth-token', TOKEN, '--peers', peerUrl] });
  t.after(() => d.stop());

  const raw = (target: string): Promise<{ status: number; body: string }> => {
    const { hostname, port } = new URL(d.httpUrl);
    return new Promise((resolve, reject) => {
      const sock = connect(Number(port), hostname);
      const chunks: Buffer[] = [];
      const timer = setTimeout(() => (sock.destroy(), reject(new Error('no answer within 20 s'))), 20_000);
      sock.on('data', (c) => chunks.push(c));
      sock.on('error', reject);
      sock.on('close', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), body: text.slice(text.indexOf('\r\n\r\n') + 4) });
      });
      sock.write(`GET ${target} HTTP/1.1\r\nhost: ${hostname}:${port}\r\nauthorization: Bearer ${TOKEN}\r\nconnection: close\r\n\r\n`);
    });
  };

  const traversal = await raw('/api/v1/sessions/x\\..\\..\\..\\..\\metrics');
  assert.equal(traversal.status, 400, traversal.body);
  assert.equal(seen.length, 0, `nothing reached the peer: ${JSON.stringify(seen)}`);

  const hash = await raw('/api/v1/findings#x');
  assert.equal(hash.status, 200, hash.body);
  assert.deepEqual(seen, [{ url: '/api/v1/findings?scope=local', fanOut: '1', auth: `Bearer ${TOKEN}` }]);

  redirect = true;
  const redirected = await raw('/api/v1/findings');
  assert.equal(redirected.status, 200);
  assert.deepEqual(JSON.parse(redirected.body).unavailable, [{ replica: peerUrl, reason: 'HTTP 302: redirects are not followed' }]);
  assert.equal(seen.length, 2, 'the redirect was not followed');
});
