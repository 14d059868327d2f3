import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Deadlines, type DeadlineClock } from '../../src/proxy/deadlines.js';

/** A clock the test moves by hand; `advance` runs what the loop would have run meanwhile. */
function fakeClock(): DeadlineClock & { advance(ms: number): void; armed(): number[]; t: number } {
  let t = 0;
  let next = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    get t() {
      return t;
    },
    now: () => t,
    schedule(fn, ms) {
      const h = next++;
      timers.set(h, { at: t + ms, fn });
      return h;
    },
    unschedule(h) {
      timers.delete(h as number);
    },
    advance(ms) {
      const end = t + ms;
      for (;;) {
        let first: [number, { at: number; fn: () => void }] | undefined;
        for (const kv of timers) if (kv[1].at <= end && (first === undefined || kv[1].at < first[1].at)) first = kv;
        if (first === undefined) break;
        timers.delete(first[0]);
        t = first[1].at;
        first[1].fn();
      }
      t = end;
    },
    armed: () => [...timers.values()].map((x) => x.at),
  };
}

test('deadlines run once each, in the order they fall due, however they were added; none early', () => {
  const clock = fakeClock();
  const d = new Deadlines(clock);
  const ran: Array<[string, number]> = [];
  const log = (name: string): void => void ran.push([name, clock.t]);
  d.add(300, log, 'c');
  d.add(100, log, 'a');
  d.add(200, log, 'b');
  d.add(100, log, 'a2');
  d.add(1000, log, 'e');
  assert.deepEqual(clock.armed(), [100], 'one loop timer, for the earliest');
  clock.advance(99);
  assert.deepEqual(ran, []);
  clock.advance(250);
  assert.deepEqual(ran, [['a', 100], ['a2', 100], ['b', 200], ['c', 300]]);
  d.add(50, log, 'd');
  clock.advance(1000);
  assert.deepEqual(ran.slice(4), [['d', 399], ['e', 1000]]);
  assert.equal(d.size, 0);
  assert.deepEqual(clock.armed(), [], 'nothing left: nothing armed');
});

test('a cancelled deadline never runs, wherever it sat in the heap; cancelling twice is harmless', () => {
  const clock = fakeClock();
  const d = new Deadlines(clock);
  const ran: number[] = [];
  const all = Array.from({ length: 40 }, (_, i) => d.add(((i * 37) % 40) + 1, (x: number) => void ran.push(x), (i * 37) % 40));
  const cancelled = new Set<number>();
  for (let i = 0; i < 40; i += 3) {
    all[i]!.cancel();
    all[i]!.cancel();
    cancelled.add((i * 37) % 40);
  }
  assert.equal(d.size, 40 - cancelled.size);
  clock.advance(100);
  const expected = Array.from({ length: 40 }, (_, i) => i).filter((x) => !cancelled.has(x));
  assert.deepEqual(ran, expected);
});

test('a deadline set from a callback, or earlier than the armed one, is honoured; the loop clock lagging is tolerated', () => {
  const clock = fakeClock();
  const d = new Deadlines(clock);
  const ran: Array<[string, number]> = [];
  d.add(500, (x: string) => void ran.push([x, clock.t]), 'late');
  d.add(
    100,
    () => {
      ran.push(['first', clock.t]);
      d.add(50, (x: string) => void ran.push([x, clock.t]), 'chained');
    },
    undefined,
  );
  assert.deepEqual(clock.armed(), [100]);
  const early = d.add(10, (x: string) => void ran.push([x, clock.t]), 'early');
  assert.deepEqual(clock.armed(), [10], 're-armed for the earlier one');
  early.cancel();
  // The head cancelled: the timer still wakes at 10, finds nothing due, and re-arms for 100.
  clock.advance(20);
  assert.deepEqual(clock.armed(), [100]);
  clock.advance(1000);
  assert.deepEqual(ran, [['first', 100], ['chained', 150], ['late', 500]]);
});

test('a deadline past the longest Node timer (2^31-1 ms) waits in several loop timers, not 1 ms', () => {
  const clock = fakeClock();
  const d = new Deadlines(clock);
  let ran = 0;
  d.add(3 * 2 ** 31, () => void ran++, undefined);
  assert.deepEqual(clock.armed(), [2 ** 31 - 1]);
  clock.advance(2 ** 32);
  assert.equal(ran, 0);
  clock.advance(2 ** 31);
  assert.equal(ran, 1);
});
