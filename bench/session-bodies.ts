/**
 * The request bodies `npm run bench -- sessions` sends (bench/sessions.ts): templates of real
 * sessions with every session key rewritten per body, so that no two bodies share a session.
 */
const KEY = Buffer.from('forkwatch.session.key');

/** Where each body's session key values start: KeyValue{key, value: AnyValue{string_value (32 hex)}}. */
function keyOffsets(b: Uint8Array): number[] {
  const c = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const at: number[] = [];
  for (let i = c.indexOf(KEY); i >= 0; i = c.indexOf(KEY, i + KEY.length)) {
    const v = i + KEY.length;
    if (c[v] === 0x12 && c[v + 1] === 0x22 && c[v + 2] === 0x0a && c[v + 3] === 0x20) at.push(v + 4);
  }
  return at;
}

/**
 * Body `i` of an endless stream: template i mod n, its session keys' first 8 hex digits set to i
 * (so every session is new); with `forks`, every `forkEvery`-th body is the same template with its
 * seed-scenario fork session added.
 */
export function bodyStream(healthy: Uint8Array[], forks?: Uint8Array[], forkEvery = 1): (i: number) => Uint8Array {
  const plain = healthy.map(keyOffsets);
  const forked = forks?.map(keyOffsets);
  return (i) => {
    const t = i % healthy.length;
    const fork = forks !== undefined && i % forkEvery === 0;
    const c = Buffer.from(fork ? forks[t]! : healthy[t]!);
    const tag = (i + 0x10000000).toString(16).slice(-8);
    for (const v of fork ? forked![t]! : plain[t]!) c.write(tag, v, 'latin1');
    return c;
  };
}

/**
 * FORKWATCH_BENCH_SESSIONS_FORK_EVERY: one request in this many of the lag run carries a fork
 * (default 10: one fork per 1,020 healthy sessions). The goal's rate is of healthy sessions; a
 * fork costs the detector what a thousand of them do (its findings, evidence and lineage written),
 * so a fork in every request (1, the earlier runs' mix) more than doubled the CPU per session
 * and loaded the detector past its measured maximum at "80 %" of it.
 */
export function forkEvery(): number {
  const raw = process.env.FORKWATCH_BENCH_SESSIONS_FORK_EVERY ?? '10';
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`FORKWATCH_BENCH_SESSIONS_FORK_EVERY: a whole number of requests >= 1, not ${raw}`);
  return n;
}
