import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import type { Finding } from '../../src/model/finding.js';
import { chromiumMissing, launchChromium } from './helpers/browser.js';
import { startDetector, waitFor, type DetectorProcess } from './helpers/detector.js';
import { readCapture, sendCapture } from './helpers/otlp-fixtures.js';
import { pngStats } from './helpers/png-colours.js';

// The page an on-call engineer opens minutes after the fork, often after a restart: the naive
// demo's session in a real browser against a real `forkwatch serve`, live, then compacted, then
// after the detector restarted on the same SQLite file. The picture must not change.
const OUT = fileURLToPath(new URL('../../test-output/e2e/incident-view-kept/', import.meta.url));
const SKIP = chromiumMissing();
const ARGS = ['--decision-window-ms', '300', '--tick-interval-ms', '100', '--compact-after-ms', '6000'];

interface SessionJson {
  source: string;
  missing: string[];
  incarnations: unknown[];
  resumes: unknown[];
  events: unknown[];
  requests: unknown[];
}

async function sessionJson(httpUrl: string, key: string): Promise<SessionJson> {
  const res = await fetch(`${httpUrl}/api/v1/sessions/${key}`, { signal: AbortSignal.timeout(10_000) });
  return (await res.json()) as SessionJson;
}

/** The session page's timeline as drawn (its SVG markup) and as seen (a screenshot), and its notice. */
async function look(browser: Browser, httpUrl: string, key: string, name: string): Promise<{ svg: string; png: Buffer; notice: string; overlaps: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1300, height: 900 }, deviceScaleFactor: 1, javaScriptEnabled: false });
  try {
    const page: Page = await context.newPage();
    const res = await page.goto(`${httpUrl}/ui/sessions/${key}`);
    assert.equal(res?.status(), 200);
    const svg = await page.locator('svg.timeline').evaluate((el) => el.outerHTML);
    mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: `${OUT}${name}-page.png`, fullPage: true });
    const png = await page.locator('figure.timeline-figure').screenshot({ path: `${OUT}${name}-timeline.png` });
    const notices = await page.locator('p.notice').allTextContents();
    // Rendered boxes: an incarnation's label must not sit under an event tick, and a finding's
    // flag must end inside the lanes (the plot), not at or past the drawing's edge.
    // A string, not a function: the test runner's transpiler would wrap named arrows in a helper the page lacks.
    const overlaps = (await page.evaluate(OVERLAPS)) as string[];
    return { svg, png, notice: notices.join(' '), overlaps };
  } finally {
    await context.close();
  }
}

/** Run in the page: band labels under event ticks, and flags ending past the lanes. */
const OVERLAPS = `(() => {
  const svgEl = document.querySelector('svg.timeline');
  function box(e) { return e.getBoundingClientRect(); }
  function hit(a, b) { return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom; }
  const out = [];
  const ticks = [...svgEl.querySelectorAll('g.events line')].map(box);
  for (const l of svgEl.querySelectorAll('text.band-label')) if (ticks.some((t) => hit(box(l), t))) out.push('label ' + l.textContent);
  const right = Math.max(...[...svgEl.querySelectorAll('rect.lane-bg')].map((r) => box(r).right));
  for (const f of svgEl.querySelectorAll('a.flag rect')) if (box(f).right > right) out.push('flag ' + f.parentElement.textContent);
  return out;
})()`;

/** Same drawing size: the figure sits below a notice on the later pages, so it may start a pixel lower. */
function assertSameSize(a: Buffer, b: Buffer): void {
  const dims = (p: Buffer) => [p.readUInt32BE(16), p.readUInt32BE(20)] as const;
  const [wa, ha] = dims(a);
  const [wb, hb] = dims(b);
  assert.equal(wa, wb);
  assert.ok(Math.abs(ha - hb) <= 1, `timeline heights ${ha} and ${hb}`);
}

test('a session page with findings is the same picture live, after compaction, and after a detector restart', { skip: SKIP, timeout: 180_000 }, async (t) => {
  let detector: DetectorProcess = await startDetector({ args: ARGS });
  t.after(() => detector.kill());
  const browser = await launchChromium();
  t.after(() => browser.close());

  await sendCapture(detector.otlpUrl, readCapture('seed-naive-stock'));
  const mint = await waitFor(async () => {
    const res = await fetch(`${detector.httpUrl}/api/v1/findings?kind=minted_on_resume&limit=1000`, { signal: AbortSignal.timeout(10_000) });
    return ((await res.json()) as { items: Finding[] }).items.find((f) => f.service === 'seed-naive-stock-server');
  }, 60_000, 200);
  const key = mint.sessionKey;

  const liveJson = await sessionJson(detector.httpUrl, key);
  assert.equal(liveJson.source, 'live', 'read before --compact-after-ms elapsed');
  const live = await look(browser, detector.httpUrl, key, 'live');
  assert.ok(pngStats(live.png).colours >= 16, 'the live timeline is drawn');
  assert.deepEqual(live.overlaps, [], 'no band label under an event tick, no flag past the plot');
  assert.ok(liveJson.incarnations.length >= 2 && liveJson.resumes.length >= 1 && liveJson.events.length > 0);

  const compactedJson = await waitFor(async () => {
    const j = await sessionJson(detector.httpUrl, key);
    return j.source === 'compacted' ? j : undefined;
  }, 60_000, 250, () => 'the session to be compacted');
  assert.deepEqual(compactedJson.missing, []);
  // The runbook's `jq '.incarnations, .resumes'` still answers.
  assert.deepEqual([compactedJson.incarnations, compactedJson.resumes, compactedJson.events, compactedJson.requests], [liveJson.incarnations, liveJson.resumes, liveJson.events, liveJson.requests]);
  const compacted = await look(browser, detector.httpUrl, key, 'compacted');
  assert.equal(compacted.svg, live.svg, 'the timeline after compaction is the live one');
  assertSameSize(compacted.png, live.png);
  assert.match(compacted.notice, /compacted this session when it went idle; the picture is the lineage kept with its findings/);

  assert.equal(await detector.stop(), 0);
  detector = await startDetector({ args: ARGS, dbPath: detector.dbPath });
  const restartedJson = await sessionJson(detector.httpUrl, key);
  assert.equal(restartedJson.source, 'compacted');
  assert.deepEqual([restartedJson.incarnations, restartedJson.resumes, restartedJson.events], [liveJson.incarnations, liveJson.resumes, liveJson.events]);
  const restarted = await look(browser, detector.httpUrl, key, 'restarted');
  assert.equal(restarted.svg, live.svg, 'the timeline after a restart is the live one');
  assertSameSize(restarted.png, live.png);
});
