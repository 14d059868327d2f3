/** Default window within which a repeated call counts as a re-issue, ms (the detector's reissueWindowMs). */
export const DEFAULT_REISSUE_WINDOW_MS = 30_000;
/** Broken calls remembered at once; the oldest go first. */
export const MAX_RECENT_SHAPES = 1024;

/**
 * Calls (method, tool, argument digest) whose stream broke recently: a later call of the same
 * shape within the window may be their re-issue, so its spans are emitted at once.
 */
export class RecentShapes {
  private readonly at = new Map<string, number>();
  constructor(private readonly windowMs = DEFAULT_REISSUE_WINDOW_MS) {}

  static shape(method: string, tool: string | undefined, digest: string): string {
    return `${method}\u0000${tool ?? ''}\u0000${digest}`;
  }

  note(shape: string, nowMs: number): void {
    this.at.delete(shape);
    this.at.set(shape, nowMs);
    if (this.at.size > MAX_RECENT_SHAPES) this.at.delete(this.at.keys().next().value as string);
  }

  has(shape: string, nowMs: number): boolean {
    const t = this.at.get(shape);
    return t !== undefined && nowMs - t <= this.windowMs;
  }
}
