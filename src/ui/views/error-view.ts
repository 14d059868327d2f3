import { html, type SafeHtml } from '../html.js';
import { UI_PREFIX } from '../ui-paths.js';
import { renderPage } from './page-layout.js';

/** A page for a 4xx/5xx answer: what was not found or wrong, and the way back. */
export function renderErrorPage(status: number, message: string): SafeHtml {
  const title = status === 404 ? 'Not found' : status === 400 ? 'Bad request' : 'Error';
  return renderPage(title, html`<h1>${title}</h1><p class="error">${message}</p><p><a href="${UI_PREFIX}/">Back to recent findings</a></p>`);
}
