import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startDetector, type DetectorProcess } from './helpers/detector.js';

// Issue 25 items 9-12, against `forkwatch serve` as a real process: the sign-in form's bad input,
// revocable sign-ins, cross-site posts, the lockout a stranger's page could cause, and `Secure`.

const TOKEN = 'e2e-sign-in-token-0123456789';
const EVIL = 'http://evil.example';
let plain: DetectorProcess;
let secure: DetectorProcess;

before(async () => {
  plain = await startDetector({ args: ['--auth-token', TOKEN] });
  secure = await startDetector({ args: ['--auth-token', TOKEN], env: { FORKWATCH_UI_COOKIE_SECURE: 'true' } });
});
after(async () => {
  await plain?.stop();
  await secure?.stop();
});

interface Answer {
  status: number;
  body: string;
  headers: Headers;
}

async function post(url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

async function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(url, { redirect: 'manual', headers, signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

async function signIn(base: string): Promise<string> {
  const r = await post(`${base}/ui/login`, { token: TOKEN, next: '/ui/' });
  assert.equal(r.status, 303, r.body);
  return r.headers.get('set-cookie')!.split(';')[0]!;
}

/** A form post with the body bytes as given (fetch would refuse nothing here, but keep it raw anyway). */
function rawPost(base: string, path: string, body: string): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => (sock.destroy(), reject(new Error('no answer within 10 s'))), 10_000);
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', reject);
    sock.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    });
    const bytes = Buffer.from(body, 'utf8');
    sock.write(`POST ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: ${bytes.length}\r\nconnection: close\r\n\r\n`);
    sock.write(bytes);
  });
}

test('item 9: next with U+2028, CR/LF or NUL is a 400 with a clear message, never a 500 or a redirect elsewhere', async () => {
  for (const next of ['/ui/\u2028x', '/ui/\r\nset-cookie: x=1', '/ui/\u0000', '/ui/\u00e9', '/ui/a b']) {
    const r = await rawPost(plain.httpUrl, '/ui/login', new URLSearchParams({ token: TOKEN, next }).toString());
    assert.equal(r.status, 400, `${JSON.stringify(next)}: ${r.text.slice(0, 300)}`);
    assert.match(r.text, /Bad sign-in request: next holds a control, space or non-ASCII character: percent-encode it/);
    assert.doesNotMatch(r.text, /set-cookie: (forkwatch_ui|x)=/i);
  }
  // The wrong token with a bad next: still the 400 (bad input first), and the count is untouched.
  const r = await rawPost(plain.httpUrl, '/ui/login', new URLSearchParams({ token: 'wrong', next: '/ui/\u2028' }).toString());
  assert.equal(r.status, 400);
  // A percent-encoded one is an ordinary /ui path.
  const ok = await post(`${plain.httpUrl}/ui/login`, { token: TOKEN, next: '/ui/findings/%E2%80%A8' });
  assert.equal(ok.status, 303);
  assert.equal(ok.headers.get('location'), '/ui/findings/%E2%80%A8');
});

test('item 10: sign-out revokes the sign-in (a copied cookie is dead), and cross-site sign-in or sign-out posts are refused', async () => {
  const cookie = await signIn(plain.httpUrl);
  const copy = cookie;
  assert.equal((await get(`${plain.httpUrl}/ui/`, { cookie })).status, 200);
  // Another site's page posting sign-out: refused, the sign-in stands.
  const crossSite: Array<Record<string, string>> = [{ origin: EVIL }, { 'sec-fetch-site': 'cross-site' }, { origin: 'null' }, { 'sec-fetch-site': 'same-site' }];
  for (const headers of crossSite) {
    const r = await post(`${plain.httpUrl}/ui/logout`, {}, { cookie, ...headers });
    assert.equal(r.status, 403, JSON.stringify(headers));
    assert.match(r.body, /Cross-site sign-out refused/);
    assert.equal(r.headers.get('set-cookie'), null);
  }
  assert.equal((await get(`${plain.httpUrl}/ui/`, { cookie })).status, 200);
  // Its own page's sign-out (same origin) works, and the copy dies with it.
  const origin = plain.httpUrl;
  const out = await post(`${plain.httpUrl}/ui/logout`, {}, { cookie, origin, 'sec-fetch-site': 'same-origin' });
  assert.equal(out.status, 303);
  assert.match(out.headers.get('set-cookie') ?? '', /^forkwatch_ui=; .*Max-Age=0/);
  const after = await get(`${plain.httpUrl}/ui/`, { cookie: copy });
  assert.equal(after.status, 303, 'the copied cookie no longer signs in');
  assert.match(after.headers.get('location') ?? '', /^\/ui\/login\?next=/);
  // Cross-site sign-in is refused as well, even with the right token.
  const cross = await post(`${plain.httpUrl}/ui/login`, { token: TOKEN }, { origin: EVIL });
  assert.equal(cross.status, 403);
  assert.equal(cross.headers.get('set-cookie'), null);
  // Two sign-ins are two ids: signing one out leaves the other.
  const a = await signIn(plain.httpUrl);
  const b = await signIn(plain.httpUrl);
  assert.notEqual(a, b);
  await post(`${plain.httpUrl}/ui/logout`, {}, { cookie: a });
  assert.equal((await get(`${plain.httpUrl}/ui/`, { cookie: a })).status, 303);
  assert.equal((await get(`${plain.httpUrl}/ui/`, { cookie: b })).status, 200);
});

test('item 12: --ui-cookie-secure (FORKWATCH_UI_COOKIE_SECURE) marks the cookie Secure; without it, it is not', async () => {
  const on = await post(`${secure.httpUrl}/ui/login`, { token: TOKEN });
  assert.match(on.headers.get('set-cookie') ?? '', /; Secure(;|$)/);
  assert.match(on.headers.get('set-cookie') ?? '', /; Max-Age=43200;/);
  const off = await post(`${plain.httpUrl}/ui/login`, { token: TOKEN });
  assert.doesNotMatch(off.headers.get('set-cookie') ?? '', /Secure/);
});

test('item 11: 21 wrong-token posts from another site do not lock the operator out of /api (nor the form)', async () => {
  for (let i = 0; i < 21; i++) {
    const r = await post(`${plain.httpUrl}/ui/login`, { token: `guess-${i}` }, { origin: EVIL, 'sec-fetch-site': 'cross-site' });
    assert.equal(r.status, 403, `post ${i}`);
  }
  const api = await get(`${plain.httpUrl}/api/v1/findings`, { authorization: `Bearer ${TOKEN}` });
  assert.equal(api.status, 200, api.body);
  assert.equal((await post(`${plain.httpUrl}/ui/login`, { token: TOKEN })).status, 303, 'the form is not held up either');
  // Even wrong tokens by the form itself (no Origin: a browser that sends none) only hold up the form.
  for (let i = 0; i < 21; i++) await post(`${plain.httpUrl}/ui/login`, { token: `guess-${i}` });
  assert.equal((await post(`${plain.httpUrl}/ui/login`, { token: TOKEN })).status, 429);
  assert.equal((await get(`${plain.httpUrl}/api/v1/findings`, { authorization: `Bearer ${TOKEN}` })).status, 200);
});
