import { randomBytes } from 'node:crypto';

/** Options of {@link UiSessions}. */
export interface UiSessionsOptions {
  /** How long a sign-in lasts, from the sign-in, ms. Default 12 h ({@link DEFAULT_UI_SESSION_TTL_MS}). */
  ttlMs?: number;
  /** Sign-ins held at once; past it the oldest is signed out. Default 1,000 ({@link DEFAULT_UI_MAX_SESSIONS}). */
  maxSessions?: number;
  /** Clock, epoch ms; default `Date.now`. */
  now?: () => number;
}

/** Default of {@link UiSessionsOptions.ttlMs}: 12 hours, a working day and then some. */
export const DEFAULT_UI_SESSION_TTL_MS = 12 * 3_600_000;
/** Default of {@link UiSessionsOptions.maxSessions}. */
export const DEFAULT_UI_MAX_SESSIONS = 1000;

/**
 * The incident view's sign-ins, held in memory: each cookie is a random id (32 bytes) that means
 * something only while it is in this table, so signing out (or expiry, or eviction) revokes it for
 * good, even on a copied cookie. Deliberately not persisted: a restart signs every browser out,
 * and a replica does not honour another replica's cookies (sign in on the replica you read).
 * Bounded: past `maxSessions` the oldest sign-in is dropped.
 */
export class UiSessions {
  private readonly ttlMs: number;
  private readonly maxSessions: number;
  private readonly now: () => number;
  /** id -> expiry (epoch ms), in order of creation: the first key is the oldest. */
  private readonly sessions = new Map<string, number>();

  constructor(options: UiSessionsOptions = {}) {
    this.ttlMs = options.ttlMs !== undefined && options.ttlMs > 0 ? options.ttlMs : DEFAULT_UI_SESSION_TTL_MS;
    this.maxSessions = Math.max(1, Math.floor(options.maxSessions ?? DEFAULT_UI_MAX_SESSIONS));
    this.now = options.now ?? Date.now;
  }

  /** A new sign-in: its id, the cookie's value. */
  create(): string {
    const t = this.now();
    // Expired ones first, then the oldest while full: the table never passes its bound.
    for (const [id, expires] of this.sessions) {
      if (expires > t && this.sessions.size < this.maxSessions) break;
      this.sessions.delete(id);
    }
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(id, t + this.ttlMs);
    return id;
  }

  /** True while `id` is a live sign-in. */
  valid(id: string): boolean {
    const expires = this.sessions.get(id);
    if (expires === undefined) return false;
    if (expires <= this.now()) {
      this.sessions.delete(id);
      return false;
    }
    return true;
  }

  /** Signs `id` out; unknown ids are ignored. */
  revoke(id: string): void {
    this.sessions.delete(id);
  }

  /** How long a sign-in lasts, ms (the cookie's Max-Age). */
  get lifetimeMs(): number {
    return this.ttlMs;
  }

  /** Sign-ins held (for tests and the bound). */
  get size(): number {
    return this.sessions.size;
  }
}
