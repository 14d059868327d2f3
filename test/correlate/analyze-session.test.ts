import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeSession } from '../../src/correlate/analyze-session.js';
import type { EventFact, SessionState } from '../../src/correlate/session-state.js';
import { healthyResumeScenario, seedScenario } from '../fixtures/scenarios/scenarios.js';
import { harness } from './harness.js';

/** The engine's state for a scenario's spans, before any decision. */
function stateOf(spans: Parameters<ReturnType<typeof harness>['ingest']>[0]): SessionState {
  const h = harness();
  h.ingest(spans);
  const full = (h.engine as unknown as { full: Map<string, SessionState> }).full;
  return [...full.values()][0]!;
}

const kindsOf = (s: SessionState): string[] => analyzeSession(s).findings.map((f) => `${f.kind}:${f.identity}`);

describe('analyzeSession', { timeout: 10_000 }, () => {
  it('gives the same answer whatever order the events were stored in', () => {
    const seed = seedScenario({ sessionId: 'order' });
    const s = stateOf([...seed.server, ...seed.client]);
    const inOrder = analyzeSession(structuredClone(s));
    const reversed = structuredClone(s);
    reversed.events.reverse();
    reversed.resumes.reverse();
    reversed.requests = new Map([...reversed.requests].reverse());
    assert.deepEqual(kindsOf(reversed), inOrder.findings.map((f) => `${f.kind}:${f.identity}`));
    assert.deepEqual(kindsOf(reversed).sort(), [
      'dedup_loss:resume:e7',
      'minted_on_resume:inc:' + inOrder.findings.find((f) => f.kind === 'minted_on_resume')!.newIncarnation,
      'orphaned_progress_token:req:3:3',
      'sequence_regression:resume:e7',
    ].sort());
  });

  it('a span with a non-finite time (which the ordered merge cannot place) changes nothing it does not concern', () => {
    const seed = seedScenario({ sessionId: 'nan' });
    const s = stateOf(seed.client);
    const before = analyzeSession(structuredClone(s));
    const odd = structuredClone(s);
    const extra: EventFact = { ...odd.events[0]!, spanId: 'ffffffffffffffff', eventId: 'odd-1', timeMs: Number.NaN, seq: undefined, jsonrpcKind: 'none' };
    delete extra.inc;
    odd.events.push(extra);
    const after = analyzeSession(odd);
    assert.deepEqual(after.findings.map((f) => [f.kind, f.identity, f.evidence.length]), before.findings.map((f) => [f.kind, f.identity, f.evidence.length]));
  });

  it('healthy traffic: nothing found, one resume counted, and the state is left as it was but for `counted`', () => {
    const h = healthyResumeScenario({ sessionId: 'pure' });
    const s = stateOf([...h.server, ...h.client]);
    const copy = structuredClone(s);
    const a = analyzeSession(s);
    assert.deepEqual(a.findings, []);
    assert.deepEqual(a.resumes.map((r) => [r.outcome, r.facts.length]), [['resumed', 2]]);
    assert.deepEqual(s, copy);
  });
});
