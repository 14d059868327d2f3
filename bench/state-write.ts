/**
 * `npm run bench -- statewrite`: what saving the engine's session state costs per span, by how
 * long the sessions have lived. 64 sessions each receive 4 spans between commits: the spans of
 * the healthy-resume scenario once, then its SSE events and request spans again and again under
 * new span ids, event seqs and request ids (a long-lived session: one stream of events and tool
 * calls, up to the engine's per-session limits). Each commit saves every touched session to a real
 * SQLite file (WAL) in one transaction. Side by side, in alternating rounds: the whole state of
 * each session per commit (what every commit did before schema 3), and a delta appended to the
 * session's log with the whole state rewritten now and then (StateJournal). CPU µs per span for
 * encoding (takeDirty) and for the SQLite commit, and bytes written per span.
 * FORKWATCH_BENCH_STATEWRITE=whole or =delta runs only that variant (e.g. under --cpu-prof).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ATTR_JSONRPC_REQUEST_ID, ATTR_SESSION_INCARNATION, ATTR_SESSION_KEY, ATTR_SSE_EVENT_ID, ATTR_SSE_EVENT_SEQ, SPAN_SSE_EVENT } from '../packages/instrumentation/src/semconv.js';
import { CorrelationEngine } from '../src/correlate/correlation-engine.js';
import type { StateJournal } from '../src/correlate/codec/state-journal.js';
import type { SpanRecord } from '../src/model/span-record.js';
import { openStore } from '../src/storage/open-store.js';
import type { Store } from '../src/storage/store.js';
import { healthyResumeScenario } from '../test/fixtures/scenarios/scenarios.js';

const SESSIONS = 64;
const SPANS_PER_COMMIT = 4;
/** Session lengths measured (spans per session when the measured rounds start). */
export const LENGTHS = [16, 64, 256, 1024];
/** Commits measured per length (the sessions grow by ROUNDS x SPANS_PER_COMMIT spans meanwhile). */
const ROUNDS = 8;
/** How often the measured rounds are repeated (fresh sessions grown to the length each time). */
const REPEATS = 5;

export interface StateWriteRow {
  length: number;
  mode: 'whole' | 'delta';
  encodeUsPerSpan: number;
  commitUsPerSpan: number;
  bytesPerSpan: number;
}

interface Variant {
  mode: 'whole' | 'delta';
  engine: CorrelationEngine;
  store: Store;
  encode: number;
  commit: number;
  bytes: number;
  spans: number;
}

const cpuMs = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e3;
};

function onlyMode(): 'whole' | 'delta' | undefined {
  const v = process.env.FORKWATCH_BENCH_STATEWRITE;
  return v === 'whole' || v === 'delta' ? v : undefined;
}

/** Saves what the spans ingested since the last call touched; with `measure`, adds its CPU and bytes to `v`. */
function commit(v: Variant, spans: SpanRecord[], measure: boolean): void {
  // The whole-state variant forgets what it wrote, as every commit did before schema 3.
  if (v.mode === 'whole') (v.engine as unknown as { journal: StateJournal }).journal.reset();
  const c0 = cpuMs();
  const states = v.engine.takeDirty();
  const c1 = cpuMs();
  v.store.commit({ findings: [], states });
  const c2 = cpuMs();
  if (!measure) return;
  v.encode += c1 - c0;
  v.commit += c2 - c1;
  v.spans += spans.length;
  for (const s of states) {
    if (s.state instanceof Uint8Array) v.bytes += s.state.length;
    for (const c of s.log ?? []) v.bytes += c.length;
  }
}

/** Runs the benchmark; one row per session length and mode. */
export function benchStateWrite(): StateWriteRow[] {
  const sc = healthyResumeScenario({ sessionId: 'statewrite' });
  const first = [...sc.server, ...sc.client];
  // What repeats: events and request spans (no new incarnation, no resume).
  const loop = first.filter((x) => x.name === SPAN_SSE_EVENT || x.name.startsWith('forkwatch.request.'));
  const spanAt = (i: number, seq: number): SpanRecord => {
    const t = i < first.length ? first[i]! : loop[(i - first.length) % loop.length]!;
    if (i < first.length) return t;
    const a = { ...t.attributes };
    if (t.name === SPAN_SSE_EVENT) {
      a[ATTR_SSE_EVENT_SEQ] = seq;
      a[ATTR_SSE_EVENT_ID] = `${String(a[ATTR_SESSION_INCARNATION] ?? '')}-${seq}`;
    } else if (a[ATTR_JSONRPC_REQUEST_ID] !== undefined) a[ATTR_JSONRPC_REQUEST_ID] = `${String(a[ATTR_JSONRPC_REQUEST_ID])}-${Math.floor((i - first.length) / loop.length)}`;
    return { ...t, attributes: a };
  };
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-statewrite-'));
  const rows: StateWriteRow[] = [];
  try {
    for (const length of LENGTHS) {
      const totals = { whole: { encode: 0, commit: 0, bytes: 0, spans: 0 }, delta: { encode: 0, commit: 0, bytes: 0, spans: 0 } };
      for (let rep = 0; rep < REPEATS; rep++) {
        let now = 1_900_000_000_000;
        const variants: Variant[] = (onlyMode() !== undefined ? [onlyMode()!] : (['whole', 'delta'] as const)).map((mode) => ({
          mode,
          engine: new CorrelationEngine({ now: () => now }),
          store: openStore({ path: join(dir, `${mode}-${length}-${rep}.db`), now: () => now }),
          encode: 0,
          commit: 0,
          bytes: 0,
          spans: 0,
        }));
        let n = 0;
        const batch = (): SpanRecord[] => {
          const out: SpanRecord[] = [];
          for (let s = 0; s < SESSIONS; s++) {
            for (let k = 0; k < SPANS_PER_COMMIT; k++) {
              const t = spanAt(n + k, n + k);
              out.push({ ...t, spanId: (n * SESSIONS * SPANS_PER_COMMIT + s * SPANS_PER_COMMIT + k + 1).toString(16).padStart(16, '0'), attributes: { ...t.attributes, [ATTR_SESSION_KEY]: `statewrite-${length}-${s}` } });
            }
          }
          n += SPANS_PER_COMMIT;
          return out;
        };
        // Grow the sessions to `length` spans (both variants alike), then measure.
        // Spans arrive, and the group commit comes a few ms later (the detector's default interval is 20 ms).
        const round = (measure: boolean, order: Variant[]): void => {
          const spans = batch();
          for (const v of variants) v.engine.ingest(spans);
          now += 10;
          for (const v of order) commit(v, spans, measure);
          now += 10;
        };
        while (n < length) round(false, variants);
        // Alternate which variant goes first: both see the same machine.
        for (let r = 0; r < ROUNDS; r++) round(true, r % 2 === 0 ? variants : [...variants].reverse());
        for (const v of variants) {
          v.store.close();
          const t = totals[v.mode];
          t.encode += v.encode;
          t.commit += v.commit;
          t.bytes += v.bytes;
          t.spans += v.spans;
        }
      }
      for (const mode of ['whole', 'delta'] as const) {
        const t = totals[mode];
        if (t.spans === 0) continue;
        rows.push({ length, mode, encodeUsPerSpan: (t.encode * 1000) / t.spans, commitUsPerSpan: (t.commit * 1000) / t.spans, bytesPerSpan: t.bytes / t.spans });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
