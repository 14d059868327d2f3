/**
 * Child of `npm run bench -- wire-instructions` (run under valgrind): the detector's work on the
 * wire benchmark's payloads in this one process, as the ingest pipeline does it but without
 * sockets: decode, engine ingest, then every 4 requests (4 exporters sharing a commit interval)
 * the engine's tick and a group commit in the pipeline's slices (COMMIT_SLICE_STATES and, where
 * the pipeline has it, COMMIT_SLICE_BYTES) into a real SQLite file. Each pass is the payloads with
 * new session keys, written into one copy of the bodies in place. argv: forkwatch ratio (0.2 or 1), passes. Prints one JSON line.
 *
 * The engine's clock is virtual, 40 ms per request (about the wire bench's rate at 100 %
 * forkwatch spans, where a pass takes about 2 s), so the 2,250 ms window decides each pass's
 * sessions during the next one at the same point in every run: on the wall clock under valgrind
 * the decisions fell wherever the machine's load put them, and two runs of one commit differed
 * by 5 % or more.
 *
 * FORKWATCH_BENCH_ALLOC_PROF=FILE writes V8's sampling heap profile of the run to FILE, counting
 * objects the GC already collected too (what was allocated, not what is left): allocation per
 * site, as `--heap-prof` cannot tell.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CorrelationEngine } from '../src/correlate/correlation-engine.js';
import type { Finding } from '../src/model/finding.js';
import { decodeProtobuf } from '../src/otlp/decode-protobuf.js';
import * as pipeline from '../src/service/ingest-pipeline.js';
import { openStore } from '../src/storage/open-store.js';
import { interleave, rekey, rekeyInPlace } from './wire.js';
import { loadWirePayloads } from './wire-payloads.js';

const ratio = Number(process.argv[2] ?? 1);
const passes = Number(process.argv[3] ?? 2);
const slice = pipeline.COMMIT_SLICE_STATES;
const sliceBytes = (pipeline as { COMMIT_SLICE_BYTES?: number }).COMMIT_SLICE_BYTES ?? Infinity;
const p = loadWirePayloads(1000, ratio, 4);
const allocProf = process.env.FORKWATCH_BENCH_ALLOC_PROF;
const inspector = allocProf ? new Session() : undefined;
if (inspector) {
  inspector.connect();
  await inspector.post('HeapProfiler.enable');
  await inspector.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
}
// One copy of the bodies, rekeyed in place before each pass (rekeyInPlace): the bench's own work
// per pass is then four byte stores per session key, and no pass's copies wait in memory.
const bodies = interleave(rekey(p.byExporter, 1));
const dir = mkdtempSync(join(tmpdir(), 'forkwatch-wire-pipeline-'));
const findings: Finding[] = [];
const MS_PER_REQUEST = 40;
let now = Date.UTC(2026, 11, 3);
const store = openStore({ path: join(dir, 'db.sqlite'), now: () => now });
const engine = new CorrelationEngine({ now: () => now }, { onFinding: (f) => void findings.push(f) }, { decisionWindowMs: 2250 });
let transactions = 0;
try {
  for (let k = 1; k <= passes; k++) {
    rekeyInPlace(bodies, k);
    let i = 0;
    for (const b of bodies) {
      now += MS_PER_REQUEST;
      engine.ingest(decodeProtobuf(b).spans);
      if (++i % 4 !== 0) continue;
      engine.tick();
      // As IngestPipeline.flushSliced: slices until what was dirty at the start is saved.
      let left = engine.dirtyCount;
      let states = engine.takeDirty(slice, sliceBytes);
      store.commit({ findings: findings.splice(0), states });
      transactions++;
      left -= states.length;
      while (left > 0) {
        states = engine.takeDirty(Math.min(slice, left), sliceBytes);
        if (states.length === 0) break;
        store.commit({ findings: [], states });
        transactions++;
        left -= states.length;
      }
    }
  }
} finally {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}
if (inspector) writeFileSync(allocProf!, JSON.stringify((await inspector.post('HeapProfiler.stopSampling')).profile));
process.stdout.write(`${JSON.stringify({ spans: p.spans * passes, forkwatchSpans: p.forkwatchSpans * passes, transactions })}\n`);
