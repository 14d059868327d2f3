import { html, type HtmlValue, type SafeHtml } from '../html.js';
import { UI_PREFIX } from '../ui-paths.js';

/** Path of the stylesheet route. */
export const STYLESHEET_PATH = `${UI_PREFIX}/assets/forkwatch.css`;

/** The document around a page's content: one same-origin stylesheet, no script, no external asset. */
export function renderPage(title: string, content: HtmlValue, opts: { signedIn?: boolean } = {}): SafeHtml {
  const signOut = opts.signedIn
    ? html`<form class="inline signout" method="post" action="${UI_PREFIX}/logout"><button type="submit">Sign out</button></form>`
    : '';
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">
<title>${title} · forkwatch</title><link rel="stylesheet" href="${STYLESHEET_PATH}"><link rel="icon" type="image/svg+xml" href="${UI_PREFIX}/assets/favicon.svg"></head>
<body><header class="top"><a href="${UI_PREFIX}/">forkwatch</a><span class="sub">incident view</span>${signOut}</header>
<main>${content}</main></body></html>`;
}
