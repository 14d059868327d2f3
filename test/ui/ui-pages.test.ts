import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Finding } from '../../src/model/finding.js';
import { UI_CSP } from '../../src/ui/ui-security-headers.js';
import { HOSTILE, HOSTILE_KEY, hostileFinding, hostileLineage } from './hostile-fixture.js';
import { request, startUiServer } from './ui-server-harness.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');

function finding(i: number, over: Partial<Finding> = {}): Finding {
  return {
    id: i.toString(16).padStart(16, '0'),
    kind: i % 2 === 0 ? 'minted_on_resume' : 'orphaned_progress_token',
    service: i % 3 === 0 ? 'svc-b' : 'svc-a',
    sessionKey: 'a1'.repeat(16),
    summary: `finding number ${i}`,
    evidence: [{ traceId: 'cd'.repeat(16), spanId: '1'.repeat(16), side: 'server', timeMs: NOW - 60_000, spanName: 'forkwatch.session.created', shows: 'created' }],
    firstSeenMs: NOW - 60_000,
    detectedAtMs: NOW - 1000 * i,
    ...over,
  };
}

test('every page carries the strict CSP and hardening headers; the stylesheet is same-origin CSS', async (t) => {
  const s = await startUiServer(t, { now: () => NOW, lineage: (k) => (k === HOSTILE_KEY ? hostileLineage() : undefined) });
  s.store.commit({ findings: [hostileFinding()], states: [] });
  for (const path of ['/ui/', '/ui/findings/0123456789abcdef', `/ui/sessions/${HOSTILE_KEY}`, '/ui/findings/nope', '/ui/no-such-page', '/ui/assets/forkwatch.css']) {
    const r = await request(s.url + path);
    assert.equal(r.headers.get('content-security-policy'), UI_CSP, path);
    assert.match(UI_CSP, /default-src 'none'/);
    assert.match(UI_CSP, /frame-ancestors 'none'/);
    assert.doesNotMatch(UI_CSP, /unsafe-inline|unsafe-eval|script-src/);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff', path);
    assert.equal(r.headers.get('x-frame-options'), 'DENY', path);
    if (path.endsWith('.css')) {
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /^text\/css/);
    } else {
      assert.match(r.headers.get('content-type') ?? '', /^text\/html/, path);
      assert.equal(r.headers.get('cache-control'), 'no-store', path);
      // No script, no inline style, nothing from another origin.
      assert.doesNotMatch(r.body, /<script|style=|javascript:|src="http|href="http:\/\/|href="\/\//i, path);
    }
  }
  assert.equal((await request(`${s.url}/ui/findings/nope`)).status, 404);
  const bare = await request(`${s.url}/ui`);
  assert.equal(bare.status, 308);
  assert.equal(bare.headers.get('location'), '/ui/');
});

test('hostile tool names, event ids, incarnations and summaries render as text on every page', async (t) => {
  const s = await startUiServer(t, { now: () => NOW, lineage: (k) => (k === HOSTILE_KEY ? hostileLineage() : undefined) });
  s.store.commit({ findings: [hostileFinding()], states: [] });
  const escaped = HOSTILE.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
  for (const path of ['/ui/', '/ui/findings/0123456789abcdef', `/ui/sessions/${HOSTILE_KEY}`]) {
    const r = await request(s.url + path);
    assert.equal(r.status, 200, path);
    assert.ok(r.body.includes(escaped), `${path} shows the hostile string escaped`);
    // Escaped, the payload is inert text (`&lt;img … onerror=…&gt;`): no element of it exists.
    assert.doesNotMatch(r.body, /<script|<img/i, path);
    assert.ok(!r.body.includes(']]>'), `${path}: no raw CDATA end`);
    assert.ok(!r.body.includes(`'"]]`), `${path}: no raw quotes from data`);
  }
  const session = await request(`${s.url}/ui/sessions/${HOSTILE_KEY}`);
  // The tool name and event id reach the timeline (as text, in hover titles and labels).
  assert.ok(session.body.includes(`tool: tool${escaped}`), 'tool name in the request title');
  assert.ok(session.body.includes(`SSE event: e1${escaped}`), 'event id in the tick title');
  // A hostile `next` cannot send the browser elsewhere, and a hostile filter is echoed escaped.
  const bad = await request(`${s.url}/ui/?since=${encodeURIComponent(HOSTILE)}`);
  assert.equal(bad.status, 400);
  assert.doesNotMatch(bad.body, /<script|<img/i);
});

test('the list filters by kind, service and since as the API does, and pages with the store cursor', async (t) => {
  const s = await startUiServer(t, { now: () => NOW });
  s.store.commit({ findings: Array.from({ length: 60 }, (_, i) => finding(i + 1)), states: [] });
  const rows = (body: string): number => (body.match(/class="finding-row"/g) ?? []).length;
  const first = await request(`${s.url}/ui/`);
  assert.equal(rows(first.body), 50);
  const next = /<a rel="next" href="([^"]+)"/.exec(first.body);
  assert.ok(next, 'an "older" link');
  const second = await request(s.url + next[1]!.replace(/&amp;/g, '&'));
  assert.equal(rows(second.body), 10);
  assert.doesNotMatch(second.body, /rel="next"/);
  assert.equal(rows((await request(`${s.url}/ui/?kind=orphaned_progress_token`)).body), 30);
  assert.equal(rows((await request(`${s.url}/ui/?service=svc-b`)).body), 20);
  assert.equal(rows((await request(`${s.url}/ui/?since=10s`)).body), 10);
  // An empty form field is no filter; a bad value is a 400 page saying why.
  assert.equal(rows((await request(`${s.url}/ui/?kind=&service=&since=`)).body), 50);
  const bad = await request(`${s.url}/ui/?kind=nonsense`);
  assert.equal(bad.status, 400);
  assert.match(bad.body, /kind=&quot;nonsense&quot;/);
  // The session form redirects to the session's page.
  const form = await request(`${s.url}/ui/sessions?key=${'a1'.repeat(16)}`);
  assert.equal(form.status, 303);
  assert.equal(form.headers.get('location'), `/ui/sessions/${'a1'.repeat(16)}`);
});

test('a finding page says what to do, links the runbook section, lists evidence, and draws the stored lineage', async (t) => {
  const s = await startUiServer(t, { now: () => NOW });
  s.store.commit({ findings: [finding(2, { incarnation: 'inc-old', newIncarnation: 'inc-new' }), finding(3, { requestId: '5', progressToken: '5' })], states: [] });
  const r = await request(`${s.url}/ui/findings/${(2).toString(16).padStart(16, '0')}`);
  assert.equal(r.status, 200);
  assert.match(r.body, /What to do/);
  assert.match(r.body, /docs\/runbook\.md#mcpsessionforkdetected/);
  assert.match(r.body, /forkwatch\.session\.created/);
  assert.match(r.body, /<svg [^>]*class="timeline"/);
  assert.match(r.body, /rebuilt from the findings alone; its events, resumes, requests are no longer held/);
  // Nothing points at a timeline of events that is not there.
  assert.doesNotMatch(r.body, /Open the timeline below/);
  assert.match(r.body, /The session&#39;s events are no longer held/);
  // Its own flag on the timeline is outlined; the session's other finding is drawn too.
  assert.equal((r.body.match(/class="flag kind-minted_on_resume current"/g) ?? []).length, 1);
  assert.equal((r.body.match(/class="flag kind-orphaned_progress_token"/g) ?? []).length, 1);
  const orphan = await request(`${s.url}/ui/findings/${(3).toString(16).padStart(16, '0')}`);
  assert.match(orphan.body, /docs\/runbook\.md#mcporphanedprogresstokens/);
});
