import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { forwardHeaders, headerOf, withHeader } from '../../src/proxy/forward-headers.js';

const pairs = (raw: readonly string[]): string[] => raw.flatMap((v, i) => (i % 2 === 0 ? [`${v}: ${raw[i + 1]}`] : []));

test('forwardHeaders drops hop-by-hop headers whatever their case, and those Connection names; keeps the rest as sent', () => {
  const raw = [
    'Host', 'client.example', 'Connection', 'keep-alive, X-Hop', 'Keep-Alive', 'timeout=5', 'TE', 'trailers',
    'Transfer-Encoding', 'chunked', 'x-hop', '1', 'Proxy-Authorization', 'secret', 'Upgrade', 'h2c',
    'Mcp-Session-Id', 'abc', 'Cookie', 'a=1', 'cookie', 'b=2', 'Content-Type', 'application/json',
  ];
  assert.deepEqual(pairs(forwardHeaders(raw)), ['Host: client.example', 'Mcp-Session-Id: abc', 'Cookie: a=1', 'cookie: b=2', 'Content-Type: application/json']);
  // Without a Connection header naming others, a header of a hop-by-hop name's length is still read.
  assert.deepEqual(pairs(forwardHeaders(['trailer', 'x', 'Trailers', 'y', 'X-Other-Header', 'z'])), ['Trailers: y', 'X-Other-Header: z']);
});

test('forwardHeaders puts the upstream host in the first Host, drops a repeated one, adds one when none came', () => {
  assert.deepEqual(pairs(forwardHeaders(['Accept', '*/*', 'HOST', 'a', 'host', 'b'], 'up:8080')), ['Accept: */*', 'HOST: up:8080']);
  assert.deepEqual(pairs(forwardHeaders(['Accept', '*/*'], 'up:8080')), ['Accept: */*', 'Host: up:8080']);
  assert.deepEqual(pairs(forwardHeaders(['Host', 'a', 'Hosts', 'b'])), ['Host: a', 'Hosts: b']);
});

test('headerOf reads the first value of a name in any case; withHeader replaces every line of one', () => {
  const raw = ['MCP-Session-Id', 's1', 'mcp-session-id', 's2', 'Content-Length', '10'];
  assert.equal(headerOf(raw, 'mcp-session-id'), 's1');
  assert.equal(headerOf(raw, 'last-event-id'), undefined);
  assert.equal(headerOf(raw, 'mcp-session-i'), undefined);
  assert.deepEqual(pairs(withHeader(raw, 'content-length', '12')), ['MCP-Session-Id: s1', 'mcp-session-id: s2', 'content-length: 12']);
});

test('a raw list forwarded by http.request and writeHead arrives as it was sent (repeated lines kept, one Host)', async () => {
  let seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen = req.rawHeaders;
    req.resume();
    res.writeHead(200, forwardHeaders(['Set-Cookie', 'a=1', 'Set-Cookie', 'b=2', 'Connection', 'close', 'Content-Type', 'text/plain']));
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  try {
    const headers = forwardHeaders(['Host', 'proxy', 'Connection', 'keep-alive', 'Cookie', 'a=1', 'Cookie', 'b=2', 'Content-Length', '2'], `127.0.0.1:${port}`);
    const answer = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers }, resolve);
      req.on('error', reject);
      req.end('{}');
    });
    answer.resume();
    assert.deepEqual(
      pairs(seen).filter((h) => !/^connection:/i.test(h)),
      [`Host: 127.0.0.1:${port}`, 'Cookie: a=1', 'Cookie: b=2', 'Content-Length: 2'],
    );
    assert.deepEqual(answer.headers['set-cookie'], ['a=1', 'b=2']);
    assert.equal(answer.headers['content-type'], 'text/plain');
  } finally {
    server.close();
  }
});
