/**
 * Where a detector's CPU goes, stage by stage, on the wire benchmark's payloads: the detector's
 * own parts (decode, correlation engine, session-state encoding, SQLite commit, the engine's
 * tick) run in this process on the same requests in the same order, a commit every `perCommit`
 * requests (4 exporters each with one request in flight share a 20 ms commit interval). CPU time
 * of this process per stage, in µs per span; what the process-level figure adds on top of their
 * sum is the HTTP/gRPC server, gunzip, GC threads and the event loop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CorrelationEngine } from '../src/correlate/correlation-engine.js';
import type { StateJournal } from '../src/correlate/codec/state-journal.js';
import { decodeProtobuf } from '../src/otlp/decode-protobuf.js';
import { openStore } from '../src/storage/open-store.js';
import type { Finding } from '../src/model/finding.js';

export interface StageCpu {
  decode: number;
  ingest: number;
  encode: number;
  commit: number;
  tick: number;
}

const cpuNow = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};

/**
 * CPU seconds per stage over `passes` (each a list of request bodies, in arrival order). With
 * `whole`, every commit rewrites each touched session whole, as before schema 3 (no deltas).
 */
export function stageCpu(passes: Uint8Array[][], perCommit: number, windowMs: number, whole = false): StageCpu {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-stages-'));
  const store = openStore({ path: join(dir, 'stages.db') });
  const findings: Finding[] = [];
  const engine = new CorrelationEngine({ now: () => Date.now() }, { onFinding: (f) => void findings.push(f) }, { decisionWindowMs: windowMs });
  const t: StageCpu = { decode: 0, ingest: 0, encode: 0, commit: 0, tick: 0 };
  try {
    for (const bodies of passes) {
      let i = 0;
      for (const b of bodies) {
        const c0 = cpuNow();
        const spans = decodeProtobuf(b).spans;
        const c1 = cpuNow();
        engine.ingest(spans);
        const c2 = cpuNow();
        t.decode += c1 - c0;
        t.ingest += c2 - c1;
        if (++i % perCommit === 0) {
          const c3 = cpuNow();
          engine.tick();
          if (whole) (engine as unknown as { journal: StateJournal }).journal.reset();
          const c4 = cpuNow();
          const states = engine.takeDirty();
          const c5 = cpuNow();
          store.commit({ findings: findings.splice(0), states });
          const c6 = cpuNow();
          t.tick += c4 - c3;
          t.encode += c5 - c4;
          t.commit += c6 - c5;
        }
      }
    }
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return t;
}
