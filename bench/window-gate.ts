/**
 * The child's side of bench/callgrind-windows.ts: runs each window of calls between a
 * `WINDOW_START n` / `WINDOW_END n` pair on stdout, going on after each only when the caller
 * answers `go` on stdin (it has switched valgrind's counter by then), so the counter is switched
 * exactly around the window's calls.
 */

/** For each size of `sizes`: `settle()`, then `calls(n)` counted; stdin is let go at the end. */
export async function countedWindows(sizes: number[], settle: () => Promise<void>, calls: (n: number) => Promise<unknown>): Promise<void> {
  const go = stdinLines();
  for (const n of sizes) {
    await settle();
    console.log(`WINDOW_START ${n}`);
    await go();
    await calls(n);
    console.log(`WINDOW_END ${n}`);
    await go();
  }
  process.stdin.destroy();
}

/** Resolves once per line read from stdin (a line that came first is kept for the next call). */
function stdinLines(): () => Promise<void> {
  let buffered = '';
  const waiting: Array<() => void> = [];
  let ready = 0;
  process.stdin.setEncoding('utf8');
  // The caller went away: nobody will switch the counter or answer again.
  process.stdin.on('end', () => process.exit(1));
  process.stdin.on('data', (d: string) => {
    buffered += d;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      buffered = buffered.slice(nl + 1);
      const w = waiting.shift();
      if (w) w();
      else ready++;
    }
  });
  return () =>
    new Promise<void>((resolve) => {
      if (ready > 0) {
        ready--;
        resolve();
        return;
      }
      // Keeps running code while it waits: valgrind takes its control commands between blocks.
      const tick = setInterval(() => undefined, 5);
      waiting.push(() => {
        clearInterval(tick);
        resolve();
      });
    });
}
