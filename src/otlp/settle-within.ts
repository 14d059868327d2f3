/**
 * Calls `onResolved` once `p` resolves, or `onFailed` once it rejects or `ms` milliseconds pass
 * first (a sink that never answers must not pin requests); exactly one of them, once. One timer
 * and one `then` per call: the `Promise.race` and `finally` it replaces made four promises per
 * accepted request on both receivers. The callbacks must not throw (nothing would catch it).
 */
export function settleWithin(p: Promise<void>, ms: number, onResolved: () => void, onFailed: (err: unknown) => void): void {
  let pending = true;
  const timer = setTimeout(() => {
    if (!pending) return;
    pending = false;
    onFailed(new Error(`ingest sink did not settle within ${ms} ms`));
  }, ms);
  p.then(
    () => {
      if (!pending) return;
      pending = false;
      clearTimeout(timer);
      onResolved();
    },
    (err: unknown) => {
      if (!pending) return;
      pending = false;
      clearTimeout(timer);
      onFailed(err);
    },
  );
}
