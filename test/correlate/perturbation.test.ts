/**
 * Property: under 1 % random span loss, +-5 s skew of one side's clock, duplicated delivery and
 * shuffled batches, the engine reports no finding that the unperturbed spans do not show (no false
 * finding of any kind); loss may hide a true one. Over every capture in test/fixtures/otlp/ and the
 * synthetic scenarios, many seeds, bounded.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { SpanRecord } from '../../src/model/span-record.js';
import { ATTR_SIDE } from '../../packages/instrumentation/src/semconv.js';
import {
  clientOnlyRejectedScenario,
  gap409Scenario,
  guarded404Scenario,
  guardedStockScenario,
  healthyResumeScenario,
  reuseAcrossReaperScenario,
  seedScenario,
  statelessScenario,
} from '../fixtures/scenarios/scenarios.js';
import { StatelessCallScript, cutAndReissue } from '../fixtures/scenarios/stateless-calls.js';
import { allCaptures, cut, rng, runBatches, shuffle } from './captures.js';

const SEEDS = 60;
const LOSS = 0.01;
const SKEW_MS = 5_000;
const DUPLICATE = 0.05;

function perturb(spans: SpanRecord[], seed: number): SpanRecord[][] {
  const rnd = rng(seed);
  const side = rnd() < 0.5 ? 'client' : 'server';
  const skew = Math.round((rnd() * 2 - 1) * SKEW_MS);
  const out: SpanRecord[] = [];
  for (const s of spans) {
    if (rnd() < LOSS) continue;
    const x = s.attributes[ATTR_SIDE] === side ? { ...s, startMs: s.startMs + skew, endMs: s.endMs + skew } : s;
    out.push(x);
    if (rnd() < DUPLICATE) out.push({ ...x });
  }
  // Shuffled within a few neighbours (exporters batch by end time, not start) and cut into batches;
  // some runs deliver a whole batch twice.
  const batches = cut(shuffle(out, rnd), rnd);
  if (rnd() < 0.3 && batches.length > 0) batches.push([...batches[Math.floor(rnd() * batches.length)]!]);
  return batches;
}

/** Finding kind and id from a normalized finding line. */
const idOf = (line: string): string => {
  const f = JSON.parse(line) as { kind: string; id: string };
  return `${f.kind}:${f.id}`;
};

const both = (s: { server: SpanRecord[]; client: SpanRecord[] }): SpanRecord[] => [...s.server, ...s.client];

const sources: Array<{ name: string; spans: SpanRecord[] }> = [
  ...allCaptures(),
  { name: 'seed scenario', spans: both(seedScenario()) },
  { name: 'healthy resume scenario', spans: both(healthyResumeScenario()) },
  { name: 'guarded 404 scenario', spans: Object.values(guarded404Scenario()).flatMap((s) => [...s.server, ...s.client]) },
  { name: 'gap 409 scenario', spans: both(gap409Scenario()) },
  { name: 'reuse across reaper scenario', spans: both(reuseAcrossReaperScenario()) },
  { name: 'stateless scenario', spans: both(statelessScenario()) },
  { name: 'guarded stock scenario', spans: both(guardedStockScenario()) },
  { name: 'client-only 400 scenario', spans: clientOnlyRejectedScenario({ status: 400 }).client },
  { name: 'stateless cut, re-issued, not stopped', spans: Object.values(cutAndReissue({ serverStopsFirst: false })).flatMap((c) => c.spans) },
  { name: 'stateless cut, re-issued, stopped', spans: Object.values(cutAndReissue({ serverStopsFirst: true })).flatMap((c) => c.spans) },
  { name: 'stateless cut, not re-issued', spans: cutAndReissue({ serverStopsFirst: true }).original.spans },
  {
    name: 'stateless healthy calls and a retried failure',
    spans: [
      ...new StatelessCallScript('1').sent(0).received(1).handled(1, 100, 'completed').settled(102, 'answered').spans,
      ...new StatelessCallScript('2').sent(500).received(501).handled(501, 100, 'error').settled(602, 'error').spans,
      ...new StatelessCallScript('3').sent(900).received(901).handled(901, 100, 'completed').settled(1_002, 'answered').spans,
    ],
  },
];

describe('no false finding under loss, skew, duplicates and shuffled batches', { timeout: 120_000 }, () => {
  for (const { name, spans } of sources) {
    it(`${name}: ${SEEDS} seeds`, () => {
      const ref = new Set(runBatches([spans]).findings.map(idOf));
      for (let seed = 1; seed <= SEEDS; seed++) {
        const got = runBatches(perturb(spans, seed)).findings.map(idOf);
        const extra = got.filter((x) => !ref.has(x));
        assert.deepEqual(extra, [], `seed ${seed}: findings the unperturbed spans do not show`);
      }
    });
  }
});
