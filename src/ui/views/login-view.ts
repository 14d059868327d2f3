import { html, type SafeHtml } from '../html.js';
import { UI_PREFIX } from '../ui-paths.js';
import { renderPage } from './page-layout.js';

/** The sign-in form: the token goes in a POST body, never in a URL. `next` is a /ui path to return to. */
export function renderLoginPage(opts: { next: string; failed?: boolean; throttledSeconds?: number; badRequest?: string }): SafeHtml {
  return renderPage(
    'Sign in',
    html`<h1>Sign in</h1>
<form class="login" method="post" action="${UI_PREFIX}/login">
${opts.failed ? html`<p class="error">That token is not valid.</p>` : ''}
${opts.badRequest !== undefined ? html`<p class="error">Bad sign-in request: ${opts.badRequest}.</p>` : ''}
${opts.throttledSeconds !== undefined ? html`<p class="error">Too many wrong tokens from this address: try again in ${String(opts.throttledSeconds)} s.</p>` : ''}
<p class="muted">This detector runs with FORKWATCH_AUTH_TOKEN: enter it to read the incident view. It is kept in a cookie for this browser session only.</p>
<label>token<input type="password" name="token" autocomplete="current-password" required autofocus></label>
<input type="hidden" name="next" value="${opts.next}">
<p><button type="submit">Sign in</button></p>
</form>`,
  );
}
