import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeHtml } from '../../src/ui/html.js';
import { HOSTILE, HOSTILE_KEY, hostileFinding, hostileLineage } from './hostile-fixture.js';
import { request, startUiServer } from './ui-server-harness.js';

// Issue 25 item 13: bidi controls in span attributes must not act on the pages. Every hostile
// string of the fixture gets every bidi control (RLO first: `svc‮gnp.exe` would read reversed).
const NOW = Date.parse('2026-12-01T12:00:00Z');
const CONTROLS = ['\u202e', '\u202a', '\u202b', '\u202c', '\u202d', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c'];
const BIDI = `${CONTROLS.join('x')}gnp.exe`;
const RAW_BIDI = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;

/** The fixture with `HOSTILE` swapped for markup plus every bidi control, in every string it holds. */
function withBidi<T>(value: T): T {
  return JSON.parse(JSON.stringify(value).split(JSON.stringify(HOSTILE).slice(1, -1)).join(JSON.stringify(`${BIDI}${HOSTILE}`).slice(1, -1))) as T;
}

test('escapeHtml shows bidi controls visibly (\\u202E) instead of letting them reorder text', () => {
  assert.equal(escapeHtml('svc\u202egnp.exe'), 'svc\\u202Egnp.exe');
  assert.equal(escapeHtml('\u2066a\u2069\u200f\u061c'), '\\u2066a\\u2069\\u200F\\u061C');
  assert.equal(escapeHtml('שלום عربي'), 'שלום عربي', 'right-to-left letters themselves are text, left alone');
});

test('no page carries a raw bidi control from span attributes: list, finding, session (timeline), errors', async (t) => {
  const lineage = withBidi(hostileLineage());
  const finding = withBidi(hostileFinding());
  assert.ok(RAW_BIDI.test(lineage.service) && RAW_BIDI.test(finding.summary), 'the fixture does carry the controls');
  const s = await startUiServer(t, { now: () => NOW, lineage: (k) => (k === HOSTILE_KEY ? lineage : undefined) });
  s.store.commit({ findings: [finding], states: [] });
  const pages = [
    '/ui/',
    `/ui/?service=${encodeURIComponent(finding.service)}`,
    `/ui/?since=${encodeURIComponent(BIDI)}`,
    `/ui/findings/${finding.id}`,
    `/ui/sessions/${HOSTILE_KEY}`,
    `/ui/findings/${encodeURIComponent(BIDI)}`,
    `/ui/sessions/${encodeURIComponent(BIDI)}`,
    `/ui/login?next=${encodeURIComponent(`/ui/${BIDI}`)}`,
  ];
  let shown = 0;
  for (const path of pages) {
    const r = await request(s.url + path);
    assert.ok(r.status < 500, `${path}: ${r.status}`);
    const at = RAW_BIDI.exec(r.body);
    assert.equal(at, null, `${path} carries U+${at?.[0].charCodeAt(0).toString(16)} raw near ${JSON.stringify(r.body.slice(Math.max(0, (at?.index ?? 0) - 60), (at?.index ?? 0) + 20))}`);
    if (r.body.includes('\\u202Ex\\u202Ax')) shown++;
  }
  assert.ok(shown >= 3, `the controls are shown visibly on the pages that render the values (${shown})`);
});
