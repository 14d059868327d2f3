import { existsSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';

/** Debian's chromium (`apt-get install chromium`); scripts/install-test-deps.sh installs it. */
export const CHROMIUM = '/usr/bin/chromium';

/** Flags for a headless run on a machine without internet: nothing phones home. */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-sync', '--disable-component-update'];

/** A reason to skip, or false when chromium is there. */
export function chromiumMissing(): string | false {
  return existsSync(CHROMIUM) ? false : `${CHROMIUM} not found: install Debian's chromium (bash scripts/install-test-deps.sh; or apt-get install chromium fonts-liberation) to run the browser test`;
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
}

/** What a page did that a person would not want: console errors, script errors, dialogs, other origins. */
export interface PageWatch {
  problems: string[];
  requests: string[];
}

/** Records console errors, uncaught errors, dialogs (an alert() would mean injected script ran) and every request. */
export function watchPage(page: Page, origin: string): PageWatch {
  const w: PageWatch = { problems: [], requests: [] };
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') w.problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => w.problems.push(`page error: ${e.message}`));
  page.on('dialog', (d) => {
    w.problems.push(`dialog ${d.type()}: ${d.message()}`);
    void d.dismiss();
  });
  page.on('request', (r) => {
    w.requests.push(r.url());
    if (!r.url().startsWith(`${origin}/`)) w.problems.push(`request to another origin: ${r.url()}`);
  });
  return w;
}
