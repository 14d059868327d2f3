import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import type { Finding } from '../../src/model/finding.js';
import { chromiumMissing, launchChromium, watchPage } from './helpers/browser.js';
import { CLI, startDetector, waitFor } from './helpers/detector.js';
import { HOSTILE_MARKUP, hostileVariant, readCapture, resumedSessionKeys, sendCapture, type Capture } from './helpers/otlp-fixtures.js';
import { pngStats } from './helpers/png-colours.js';

// A person's path through the incident view, in a real browser against a real `forkwatch serve`
// fed the demo's three scenarios (their captured OTLP) and a hostile copy of the naive one.
const OUT = fileURLToPath(new URL('../../test-output/e2e/incident-view/', import.meta.url));
/** Set to 1 to (re)write the README's picture from this run: docs/incident-view-naive.png. */
const WRITE_DOCS_PNG = process.env.FORKWATCH_WRITE_DOCS_SCREENSHOT === '1';
const DOCS_PNG = fileURLToPath(new URL('../../docs/incident-view-naive.png', import.meta.url));
const HOSTILE_SERVICE = 'hostile-<script>alert(1)</script>"\'-server';
const SKIP = chromiumMissing();

async function findings(httpUrl: string): Promise<Finding[]> {
  const res = await fetch(`${httpUrl}/api/v1/findings?limit=1000`, { signal: AbortSignal.timeout(10_000) });
  return ((await res.json()) as { items: Finding[] }).items;
}

/** Screenshots a page and its timeline; fails if either is blank. Returns the timeline's PNG. */
async function shoot(page: Page, name: string): Promise<Buffer> {
  mkdirSync(OUT, { recursive: true });
  const full = await page.screenshot({ path: `${OUT}${name}-page.png`, fullPage: true });
  const figure = await page.locator('figure.timeline-figure').screenshot({ path: `${OUT}${name}-timeline.png` });
  for (const [what, png] of [['page', full], ['timeline', figure]] as const) {
    const s = pngStats(png);
    assert.ok(s.colours >= 16 && s.nonBackground >= 0.05, `${name} ${what} screenshot looks blank: ${JSON.stringify(s)}`);
  }
  return figure;
}

const timeline = (page: Page) => page.locator('svg.timeline');

test('incident view in Chromium: from the findings list to the fork drawn on its timeline, for the three demo scenarios', { skip: SKIP, timeout: 180_000 }, async () => {
  const detector = await startDetector({ args: ['--decision-window-ms', '300', '--tick-interval-ms', '100'] });
  const browser = await launchChromium().catch(async (err: unknown) => {
    await detector.stop();
    throw err;
  });
  try {
    const capture = (name: Capture): string[] => readCapture(name);
    const naive = capture('seed-naive-stock');
    for (const lines of [naive, capture('seed-guarded-guarded'), capture('healthy-resume'), hostileVariant(naive, HOSTILE_SERVICE)]) await sendCapture(detector.otlpUrl, lines);
    await waitFor(async () => {
      const all = await findings(detector.httpUrl);
      const mine = (svc: string): Finding[] => all.filter((f) => f.service === svc);
      return mine('seed-naive-stock-server').some((f) => f.kind === 'minted_on_resume') && mine(HOSTILE_SERVICE).some((f) => f.kind === 'minted_on_resume') && mine('seed-naive-stock-server').some((f) => f.kind === 'orphaned_progress_token');
    }, 60_000, 250);

    const origin = detector.httpUrl;
    const context = await browser.newContext({ viewport: { width: 1300, height: 900 }, deviceScaleFactor: 1, javaScriptEnabled: false });
    // JavaScript off for the reading path: every page must be readable without it.
    let page = await context.newPage();
    let watch = watchPage(page, origin);

    // The list: filter to the mints with the plain link, then open the naive server's.
    await page.goto(`${origin}/ui/`);
    assert.equal(await page.locator('h1').textContent(), 'Recent findings');
    await page.locator('p.quick a', { hasText: 'minted_on_resume' }).click();
    const rows = page.locator('tr.finding-row');
    assert.ok((await rows.count()) >= 2);
    for (const kind of await rows.locator('td:first-child').allTextContents()) assert.equal(kind.trim(), 'minted_on_resume');
    await rows.filter({ hasText: 'seed-naive-stock-server' }).first().locator('td.summary a').click();

    // The finding: what happened, what to do, the evidence, and the fork drawn below.
    assert.match((await page.locator('h1').textContent()) ?? '', /minted_on_resume on seed-naive-stock-server/);
    assert.ok((await page.locator('ol.steps li').count()) >= 3);
    assert.match((await page.getByRole('link', { name: 'MCPSessionForkDetected', exact: true }).getAttribute('href')) ?? '', /docs\/runbook\.md#mcpsessionforkdetected$/);
    assert.ok((await page.locator('table.evidence tbody tr').count()) >= 1);
    await timeline(page).waitFor({ state: 'visible' });
    const minted = timeline(page).locator('g.band.minted');
    assert.ok((await minted.count()) >= 1, 'the minted incarnation is drawn');
    assert.ok(await minted.first().isVisible());
    assert.match((await minted.first().locator('text.band-label').textContent()) ?? '', /MINTED by GET/);
    assert.match((await minted.first().locator('title').first().textContent()) ?? '', /created by: GET/);
    assert.ok(await timeline(page).locator('a.flag.kind-minted_on_resume').first().isVisible(), 'the MINT flag');
    const orphaned = timeline(page).locator('g.request.orphaned');
    assert.ok((await orphaned.count()) >= 1, 'the orphaned call is drawn');
    assert.match((await orphaned.first().locator('text').textContent()) ?? '', /tools\/call slow_report #\d+ token \d+ · ORPHANED: never answered/);
    assert.ok((await timeline(page).locator('g.tick.dropped').count()) >= 1, 'dedup-dropped events are marked');
    assert.ok((await timeline(page).locator('g.tick.regressed').count()) >= 1, 'the sequence regression is marked');
    assert.deepEqual(await timeline(page).locator('text.resume-label').allTextContents(), ['resume Last-Event-ID e7 → 200 forked']);
    assert.match((await timeline(page).locator('text.gap-label').first().textContent()) ?? '', /stream broken: no traffic \d+ ms/);

    // The whole session, as a picture: the README's screenshot comes from here.
    await page.locator('a', { hasText: 'The whole session' }).click();
    assert.match((await page.locator('h1').textContent()) ?? '', new RegExp(`Session ${resumedSessionKeys(naive)[0]}`));
    const naivePng = await shoot(page, 'naive');
    if (WRITE_DOCS_PNG) writeFileSync(DOCS_PNG, naivePng);

    // The other two scenarios, opened by session key as from an alert: no mint, no orphan.
    for (const [name, capt, answer] of [['guarded', 'seed-guarded-guarded', /→ 404 rejected_404/], ['healthy', 'healthy-resume', /→ 200 resumed/]] as const) {
      await page.goto(`${origin}/ui/`);
      await page.locator('input[name="key"]').fill(resumedSessionKeys(capture(capt))[0]!);
      await page.locator('button', { hasText: 'Open timeline' }).click();
      await timeline(page).waitFor({ state: 'visible' });
      const labels = await timeline(page).locator('text.resume-label').allTextContents();
      assert.ok(labels.length >= 1 && labels.every((l) => answer.test(l)), `${name}: ${labels.join(' | ')}`);
      assert.equal(await timeline(page).locator('g.band.minted').count(), 0, `${name}: nothing minted`);
      assert.equal(await timeline(page).locator('g.request.orphaned').count(), 0, `${name}: nothing orphaned`);
      assert.equal(await timeline(page).locator('g.tick.dropped').count(), 0, `${name}: nothing dropped`);
      assert.ok((await timeline(page).locator('g.tick').count()) >= 4, `${name}: its events are drawn`);
      await shoot(page, name);
    }

    // The hostile copy, with JavaScript on (had any markup become script, it would run and show
    // up as a dialog or a CSP error): its markup is text on the page, never an element.
    assert.deepEqual(watch.problems, [], watch.problems.join('\n'));
    await context.close();
    const jsContext = await browser.newContext({ viewport: { width: 1300, height: 900 }, deviceScaleFactor: 1 });
    page = await jsContext.newPage();
    watch = watchPage(page, origin);
    await page.goto(`${origin}/ui/?service=${encodeURIComponent(HOSTILE_SERVICE)}&kind=dedup_loss`);
    await page.locator('tr.finding-row td.summary a').first().click();
    await page.locator('a', { hasText: 'The whole session' }).click();
    const text = (await page.locator('body').textContent()) ?? '';
    assert.ok(text.includes(HOSTILE_MARKUP), 'the hostile event ids are shown as text');
    assert.ok(text.includes(HOSTILE_SERVICE), 'the hostile service name is shown as text');
    assert.equal(await page.locator('script, img, iframe, object, embed').count(), 0);
    assert.ok((await timeline(page).locator('g.request title', { hasText: `tool: slow_report${HOSTILE_MARKUP}` }).count()) >= 1, 'the hostile tool name in a hover title');
    await shoot(page, 'hostile');

    assert.deepEqual(watch.problems, [], watch.problems.join('\n'));
    assert.ok(watch.requests.length >= 3 && watch.requests.every((u) => u.startsWith(`${origin}/`)));
    await jsContext.close();
  } finally {
    await browser.close();
    await detector.stop();
  }
});

test('forkwatch demo prints the incident view link of each finding', { timeout: 120_000 }, () => {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  for (const k of Object.keys(env)) if (k.startsWith('FORKWATCH_')) delete env[k];
  const r = spawnSync(process.execPath, [CLI, 'demo', '--scenario', 'naive'], { env, encoding: 'utf8', timeout: 110_000 });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const links = r.stdout.match(/http:\/\/127\.0\.0\.1:\d+\/ui\/findings\/[0-9a-f]{16}/g) ?? [];
  const kinds = r.stdout.match(/^ {4}(minted_on_resume|dedup_loss|sequence_regression|orphaned_progress_token|incarnation_changed|replay_gap) /gm) ?? [];
  assert.ok(kinds.length >= 1, r.stdout);
  assert.equal(links.length, kinds.length, 'one link per finding');
  assert.match(r.stdout, /session timeline: http:\/\/127\.0\.0\.1:\d+\/ui\/sessions\/[0-9a-f]{32}/);
  assert.doesNotMatch(r.stdout, /\/api\/v1\/findings\/[0-9a-f]{16}/);
});
