/**
 * `node --import <this file> build/bench/one-variant.js` with MARK_TIMED=1 and N calls: counts the
 * async resources created (promises, ticks, timers, by async_hooks type) between the bench's
 * TIMED_START and TIMED_END markers and prints them per call as `ASYNC_INITS {json}`.
 *
 * Why promises: under NodeSDK's AsyncLocalStorage context manager, Node 20's promise hooks run for
 * every promise of the process (init, before, after, resolve), so a variant's promise count per
 * call is the part of its cost those hooks scale with. The counter is exact and does not move
 * with the machine's load (its own init hook turns the promise hooks on in every variant alike:
 * counts only, no timing, are read from such a run).
 */
import { createHook } from 'node:async_hooks';

const counts = new Map<string, number>();
let counting = false;
createHook({
  init(_id, type) {
    if (counting) counts.set(type, (counts.get(type) ?? 0) + 1);
  },
}).enable();

// The markers are the bench's own console.log lines; they are passed through unchanged.
const log = console.log.bind(console);
console.log = (...args: unknown[]): void => {
  if (args[0] === 'TIMED_START') counting = true;
  if (args[0] === 'TIMED_END') {
    counting = false;
    const calls = Number(process.env.N ?? 100);
    log(`ASYNC_INITS ${JSON.stringify(Object.fromEntries([...counts].map(([type, n]) => [type, n / calls])))}`);
  }
  log(...args);
};
