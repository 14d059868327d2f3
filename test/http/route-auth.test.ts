import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { createApiServer } from '../../src/http/api-server.js';
import { createOtlpServer } from '../../src/http/otlp-server.js';
import { addCredentialCheck, installRouteAuth, listRouteAuth, type RouteAuthEntry } from '../../src/http/route-auth.js';
import { createMetrics } from '../../src/metrics/create-metrics.js';
import { openStore } from '../../src/storage/open-store.js';
import { rawRequest } from './helpers/raw-http.js';

const TOKEN = 's3cret';

/** A concrete path of a route template: every `:param` becomes `x`. */
function concrete(url: string): string {
  return url.replace(/:[^/]+/g, 'x');
}

/** Percent-encodes the character at `i` of `s`. */
function encodeAt(s: string, i: number, lower = false): string {
  const hex = s.charCodeAt(i).toString(16).padStart(2, '0');
  return `${s.slice(0, i)}%${lower ? hex : hex.toUpperCase()}${s.slice(i + 1)}`;
}

/** Every way of writing `path` that a router might take for it, and some it must not. */
function variants(path: string, port: number): string[] {
  const out = new Set<string>([path, `${path}?a=1`, `${path}#frag`]);
  // each letter percent-encoded on its own, both hex cases
  for (let i = 0; i < path.length; i++) {
    if (/[a-z0-9.]/i.test(path[i]!)) {
      out.add(encodeAt(path, i));
      out.add(encodeAt(path, i, true));
    }
  }
  out.add(path.replace(/[a-z]/gi, (c) => `%${c.charCodeAt(0).toString(16)}`));
  // slashes
  out.add(path.replace(/\//g, '%2F'));
  out.add(`/${path.slice(1).replace(/\//g, '%2f')}`);
  out.add(path.replace(/\//g, '//'));
  out.add(`/${path}`);
  out.add(path.replace(/\//g, '\\'));
  out.add(`${path}/`);
  out.add(`${path}//`);
  // dot segments, plain and encoded
  out.add(path.replace(/\//g, '/./'));
  out.add(`/nothing/..${path}`);
  out.add(`/nothing/%2e%2e${path}`);
  out.add(`/nothing%2f..${path}`);
  out.add(`${path}/.`);
  out.add(`${path}/..${path}`);
  // case
  out.add(path.toUpperCase());
  out.add(path.replace(/(^|\/)([a-z])/g, (_m, s: string, c: string) => s + c.toUpperCase()));
  // matrix parameters
  out.add(`${path};a=1`);
  out.add(path.replace(/\/([^/]+)/, '/$1;a=1'));
  out.add(`${path}%3Ba=1`);
  // odd bytes
  out.add(`${path}%00`);
  out.add(`${path}%20`);
  out.add(`${path}%2500`);
  // very long
  out.add(`${'/.'.repeat(3000)}${path}`);
  out.add(`${path}${'/x'.repeat(3000)}`);
  out.add(`${path}?${'q'.repeat(6000)}`);
  out.add(path.replace(/x$/, 'x'.repeat(6000)));
  // absolute-form request targets, the other way around the old raw-URL check
  for (const p of [...out]) {
    out.add(`http://127.0.0.1:${port}${p}`);
  }
  out.add(`HTTP://127.0.0.1:${port}${path}`);
  out.add(`http://evil.example${path}`);
  out.add(`http://user:pw@127.0.0.1:${port}${path}`);
  return [...out];
}

function head(method: string, target: string, auth?: string): string {
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1'];
  if (method === 'POST') lines.push('Content-Type: application/x-protobuf', 'Content-Length: 0');
  if (auth) lines.push(`Authorization: ${auth}`);
  return lines.join('\r\n');
}

/** The incident view's routes that are open by design: its stylesheet, icon, sign-in and sign-out. */
const UI_OPEN_ROUTES = new Set(
  ['/ui', '/ui/assets/forkwatch.css', '/ui/assets/favicon.svg', '/ui/login'].flatMap((u) => [`GET ${u}`, `HEAD ${u}`]).concat(['POST /ui/login', 'POST /ui/logout']),
);

/** A UI page refused without credentials sends a browser to the sign-in form, and nothing else. */
function signInRedirect(route: RouteAuthEntry, r: { status: number; text: string }): boolean {
  return route.auth === 'token-or-cookie' && r.status === 303 && /\r\nlocation: \/ui\/login\?next=[^\r]*\r\n/i.test(r.text) && /\r\ncontent-length: 0\r\n/i.test(r.text);
}

interface Server {
  name: string;
  app: FastifyInstance;
  port: number;
}

async function servers(t: { after(fn: () => unknown): void }): Promise<Server[]> {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-auth-'));
  const store = openStore({ path: join(dir, 'fw.db') });
  const api = await createApiServer({
    store,
    lineage: () => undefined,
    metrics: createMetrics(),
    ready: () => true,
    authToken: TOKEN,
    metricsAuth: true,
    // This test presents hundreds of wrong tokens on purpose; the throttle has tests of its own.
    authFailuresPerMinute: 0,
  });
  const otlp = await createOtlpServer({ sink: { offer: () => Promise.resolve() }, authToken: TOKEN });
  await api.listen({ host: '127.0.0.1', port: 0 });
  await otlp.listen({ host: '127.0.0.1', port: 0 });
  t.after(async () => {
    await api.close();
    await otlp.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const port = (app: FastifyInstance): number => (app.server.address() as { port: number }).port;
  return [
    { name: 'api', app: api, port: port(api) },
    { name: 'otlp', app: otlp, port: port(otlp) },
  ];
}

test('every route of both ports answers 401 or 404 without the token, however its path is written', async (t) => {
  let checked = 0;
  for (const server of await servers(t)) {
    const routes: readonly RouteAuthEntry[] = listRouteAuth(server.app);
    assert.ok(routes.length > 0, server.name);
    for (const route of routes) {
      // With metrics auth on and a token set, no route of either port is open but the incident
      // view's sign-in form and its assets (test/ui checks they hold no data).
      if (route.auth === 'open' && UI_OPEN_ROUTES.has(`${route.method} ${route.url}`)) continue;
      assert.notEqual(route.auth, 'open', `${server.name} ${route.method} ${route.url}`);
      const path = concrete(route.url);
      // The canonical path with the token gets past auth (the test could fail).
      const ok = await rawRequest(server.port, head(route.method, path, `Bearer ${TOKEN}`));
      // (a 404 of the route itself, e.g. "finding not found", is fine; "route ... not found" is not)
      assert.ok(ok.status !== 401 && !/route /i.test(ok.text), `${server.name} ${route.method} ${path} with token: ${ok.status}`);
      for (const target of variants(path, server.port)) {
        const r = await rawRequest(server.port, head(route.method, target));
        assert.ok(
          [400, 401, 404, 414].includes(r.status) || signInRedirect(route, r),
          `${server.name} ${route.method} ${target.slice(0, 200)} without token answered ${r.status}`,
        );
        if (r.status === 400 || r.status === 414) {
          // refused before routing (the HTTP parser; a parameter over maxParamLength): no route ran
          assert.doesNotMatch(r.text, /"items"|forkwatch_|"status":"ok"|"status":"ready"/);
        }
        const wrong = await rawRequest(server.port, head(route.method, target, 'Bearer wrong'));
        assert.ok([400, 401, 404, 414].includes(wrong.status) || signInRedirect(route, wrong), `${target.slice(0, 200)} with a wrong token: ${wrong.status}`);
        checked++;
      }
    }
  }
  assert.ok(checked > 500, `checked ${checked} requests`);
});

test('a route registered without an auth decision throws at registration, in child plugins too', async () => {
  const app = Fastify();
  installRouteAuth(app, { token: TOKEN, deny: (_req, reply) => reply.code(401).send() });
  assert.throws(() => app.get('/forgot', async () => 'x'), /no auth decision/);
  assert.throws(() => app.get('/typo', { config: { auth: 'tokn' } }, async () => 'x'), /no auth decision/);
  app.register(async (child) => {
    child.get('/child-forgot', async () => 'x');
  });
  await assert.rejects(async () => {
    await app.ready();
  }, /no auth decision/);
});

test('token-or-cookie routes admit the token or any added credential check; a throwing check admits nobody', async (t) => {
  const app = Fastify();
  installRouteAuth(app, { token: TOKEN, deny: (_req, reply) => reply.code(401).send({ denied: true }) });
  app.register(async (ui) => {
    addCredentialCheck(ui, (req) => req.headers.cookie === 'fw=good');
    addCredentialCheck(ui, () => {
      throw new Error('broken checker');
    });
    ui.get('/ui/', { config: { auth: 'token-or-cookie' } }, async () => 'page');
    ui.get(
      '/ui/login-needed',
      { config: { auth: 'token-or-cookie', onUnauthorized: (_req: FastifyRequest, reply: FastifyReply) => reply.code(303).header('location', '/ui/login').send() } },
      async () => 'page',
    );
    ui.get('/ui/login', { config: { auth: 'open' } }, async () => 'login');
  });
  app.get('/api/x', { config: { auth: 'token' } }, async () => 'api');
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());
  const port = (app.server.address() as { port: number }).port;
  const status = async (target: string, extra: string[] = []): Promise<number> =>
    (await rawRequest(port, [`GET ${target} HTTP/1.1`, 'Host: 127.0.0.1', ...extra].join('\r\n'))).status;
  assert.equal(await status('/ui/'), 401);
  assert.equal(await status('/ui/', ['Cookie: fw=bad']), 401);
  assert.equal(await status('/ui/', ['Cookie: fw=good']), 200);
  assert.equal(await status('/ui/', [`Authorization: Bearer ${TOKEN}`]), 200);
  assert.equal(await status('/ui/login-needed'), 303);
  assert.equal(await status('/ui/login'), 200);
  // a cookie is no credential on a token route
  assert.equal(await status('/api/x', ['Cookie: fw=good']), 401);
  assert.equal(await status('/%61pi/x', ['Cookie: fw=good']), 401);
});
