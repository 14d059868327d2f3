import type { SessionLineage } from '../model/lineage.js';
import type { Store } from '../storage/store.js';
import type { AuthThrottle } from '../http/auth-throttle.js';
import type { UiSessions } from './ui-sessions.js';

/** What the incident view reads: the store and the API's lineage source, nothing of the engine. */
export interface UiOptions {
  store: Store;
  /** A session's live lineage (the API's source for GET /api/v1/sessions/:key), or undefined. */
  lineage: (key: string) => SessionLineage | undefined;
  /** When set, pages need the sign-in cookie or `Authorization: Bearer <authToken>`. */
  authToken?: string;
  /** Mark the cookie `Secure` (serve behind TLS). Default false: the detector speaks plain HTTP. */
  secureCookie?: boolean;
  /** The sign-ins the cookie refers to; needed with `authToken`. */
  sessions?: UiSessions;
  /** Counts wrong tokens posted to the sign-in form per client address (its own count: the API's bearer check keeps another). */
  throttle?: AuthThrottle;
  /** Clock, epoch ms; default `Date.now`. */
  now?: () => number;
}

/** Findings per page of the list. */
export const UI_PAGE_SIZE = 50;
