// Child of session-log.test.ts: a correlation engine over long sessions, saved by a real store
// after every span. Each commit waits for one byte on stdin (the parent paces it, so it knows
// which commit a kill can land in). Before the commit it prints `pre N HASH LOGS` (the hash of
// every live session's whole state, and how many sessions have deltas in their log once commit N
// is in), after it `ack N`, until the parent kills it with SIGKILL.
import { createHash } from 'node:crypto';
import { ByteWriter } from '../../src/correlate/byte-writer.js';
import { encodeBinarySession } from '../../src/correlate/codec/binary-session.js';
import { CorrelationEngine } from '../../src/correlate/correlation-engine.js';
import type { SessionState } from '../../src/correlate/session-state.js';
import { openStore } from '../../src/storage/open-store.js';
import { healthyResumeScenario, seedScenario } from '../fixtures/scenarios/scenarios.js';

/** Hash of every full session of `engine`, by key. */
export function stateHash(engine: CorrelationEngine): string {
  const full = (engine as unknown as { full: Map<string, SessionState> }).full;
  const h = createHash('sha256');
  for (const key of [...full.keys()].sort()) {
    h.update(key);
    h.update(encodeBinarySession(new ByteWriter(), full.get(key)!));
  }
  return h.digest('hex');
}

if (process.argv[2] !== undefined) {
  const store = openStore({ path: process.argv[2] });
  let now = 1_900_000_000_000;
  const engine = new CorrelationEngine({ now: () => now }, {}, { maxEventsPerIncarnation: 40, maxRequestsPerSession: 8 });
  const scenarios = [0, 1, 2, 3].map((i) => (i === 3 ? seedScenario({ sessionId: `log-${i}` }) : healthyResumeScenario({ sessionId: `log-${i}` })));
  const spans = scenarios.map((sc) => [...sc.server, ...sc.client]);
  // Whether each session's log holds deltas: a whole state empties it, a delta adds to it.
  const logged = new Map<string, boolean>();
  let permits = 0;
  let wake: (() => void) | undefined;
  process.stdin.on('data', (d: Buffer) => {
    permits += d.length;
    wake?.();
  });
  for (let n = 0; ; n++) {
    while (permits === 0) await new Promise<void>((r) => (wake = r));
    permits--;
    // Four sessions that never end: each span comes again under a new span id.
    const list = spans[n % spans.length]!;
    const span = list[Math.floor(n / spans.length) % list.length]!;
    engine.ingest([{ ...span, spanId: (n + 1).toString(16).padStart(16, '0') }]);
    now += 7;
    if (n % 50 === 0) engine.tick();
    const states = engine.takeDirty();
    for (const s of states) {
      const deltas = (s.log?.length ?? 0) > 0;
      logged.set(s.key, s.state !== undefined ? deltas : deltas || logged.get(s.key) === true);
    }
    let logs = 0;
    for (const v of logged.values()) if (v) logs++;
    process.stdout.write(`pre ${n} ${stateHash(engine)} ${logs}\n`);
    store.commit({ findings: [], states });
    process.stdout.write(`ack ${n}\n`);
  }
}
