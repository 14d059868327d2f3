import type { Finding } from '../../src/model/finding.js';

/** Findings of `services` on a running detector (`/api/v1/findings`), every page. */
export async function findingsFor(httpUrl: string, services: readonly string[]): Promise<Finding[]> {
  const out: Finding[] = [];
  for (const service of services) {
    let cursor: string | undefined;
    do {
      const res = await fetch(`${httpUrl}/api/v1/findings?service=${encodeURIComponent(service)}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      if (res.status !== 200) throw new Error(`findings of ${service}: HTTP ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { items: Finding[]; nextCursor?: string };
      out.push(...body.items);
      cursor = body.nextCursor;
    } while (cursor);
  }
  return out;
}

/**
 * The live detector's findings for a run once they settled: at least `minWaitMs` (the decision
 * window and the orphan delays) after the run's spans were flushed, then unchanged for three
 * polls `pollMs` apart; bounded by `maxWaitMs` (then what is there).
 */
export async function settledLiveFindings(httpUrl: string, services: readonly string[], opts: { minWaitMs: number; pollMs?: number; maxWaitMs?: number }): Promise<Finding[]> {
  const start = Date.now();
  const poll = opts.pollMs ?? 300;
  const deadline = start + (opts.maxWaitMs ?? 20_000);
  let last = '';
  let stable = 0;
  for (;;) {
    const f = await findingsFor(httpUrl, services);
    const sig = f.map((x) => `${x.id}:${x.resolvedAtMs ?? ''}`).sort().join(',');
    stable = sig === last ? stable + 1 : 0;
    last = sig;
    if ((stable >= 3 && Date.now() - start >= opts.minWaitMs) || Date.now() > deadline) return f;
    await new Promise((r) => setTimeout(r, poll));
  }
}
