/**
 * A callback an instrumentation runs once, just before it first makes anything that emits (a
 * transport observed, a client attached, a stateless server): `/register` decides there whether to
 * join a tracer provider the app registered meanwhile or to start its own NodeSDK.
 */
const hooks = new WeakMap<object, () => void>();

/** Sets `owner`'s first-use callback (replacing any). */
export function setFirstUse(owner: object, fn: () => void): void {
  hooks.set(owner, fn);
}

/** Runs and forgets `owner`'s first-use callback; a throwing callback is swallowed. */
export function runFirstUse(owner: object): void {
  const fn = hooks.get(owner);
  if (!fn) return;
  hooks.delete(owner);
  try {
    fn();
  } catch {
    // Never into the app.
  }
}
