import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scenarioTimers } from '../../src/demo/seed-scenario.js';
import { formatScenarioResult } from '../../src/demo/format-scenario.js';
import type { ScenarioResult } from '../../src/demo/types.js';

test('timers: the seed defaults, scaled, with explicit values kept as given', () => {
  const t = scenarioTimers({ server: 'naive', client: 'stock' });
  assert.equal(t.reapAfterMs, 300);
  assert.equal(t.reconnectDelayMs, 450);
  assert.equal(t.partitionAfterEvents, 7);
  assert.ok(t.reapAfterMs < t.reconnectDelayMs, 'the reap must come before the reconnect for the seed to fork');
  const scaled = scenarioTimers({ server: 'naive', client: 'stock', scale: 2, reapAfterMs: 100 });
  assert.equal(scaled.reconnectDelayMs, 900);
  assert.equal(scaled.reapAfterMs, 100);
  const healthy = scenarioTimers({ server: 'naive', client: 'stock', healthy: true });
  assert.ok(healthy.partitionMs < healthy.reconnectDelayMs && healthy.reconnectDelayMs < healthy.reapAfterMs, 'a healthy resume reaches a live session');
});

test('the summary names the fork, the loss and the hang', () => {
  const r: ScenarioResult = {
    server: 'naive',
    client: 'stock',
    healthy: false,
    wallMs: 2400,
    steps: [],
    calls: [],
    resultsProduced: 2,
    resultsReceived: 0,
    lostResults: [{ requestId: '2', life: 2, onWire: true, droppedByDedup: true }],
    droppedByDedup: [{ eventId: 'e7', kind: 'response', jsonrpcId: '2' }],
    hung: [{ attempt: 1, durationMs: 1502 }],
    errors: [],
    forks: [],
    resumes: [{ lastEventId: 'e7', status: 200, atMs: 800 }],
    replayedEventIds: [],
    eventsBeforePartition: [],
    sequenceRegressions: [{ fromEventId: 'e7', toEventId: 'e1' }],
    sessions: { initialized: 1, rehydrated: 1, reaped: 2, reinitializedByClient: 0 },
    proxy: { connections: 5, severed: 3, refused: 0, bytesDown: 4000 },
    wire: { exchanges: [], events: [] },
  };
  const text = formatScenarioResult(r).join('\n');
  assert.match(text, /Last-Event-ID e7 answered 200/);
  assert.match(text, /FORK: the server rehydrated/);
  assert.match(text, /e7 -> e1/);
  assert.match(text, /e7\/response/);
  assert.match(text, /1 lost after reaching the client/);
  assert.match(text, /call 1 hung 1502 ms/);
});
