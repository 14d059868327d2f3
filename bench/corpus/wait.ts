/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `cond` every 20 ms until it holds (true) or `maxMs` passed (false). */
export async function until(cond: () => boolean, maxMs: number): Promise<boolean> {
  const end = Date.now() + maxMs;
  while (!cond()) {
    if (Date.now() > end) return false;
    await sleep(20);
  }
  return true;
}
