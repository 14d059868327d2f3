import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wireViewNote } from '../../src/demo/wire-view-note.js';
import { externalDetectorNote } from '../../src/cli/demo.js';
import type { ScenarioResult } from '../../src/demo/types.js';

const result = (rehydrations: ScenarioResult['rehydrations']): ScenarioResult => ({ rehydrations } as unknown as ScenarioResult);

test('behind the proxy, the narration says which rehydrations the wire shows and how many mints to expect', () => {
  const text = wireViewNote(result([{ life: 2, method: 'GET', events: 7 }, { life: 3, method: 'notifications/cancelled', events: 0 }])).join('\n');
  assert.match(text, /life 2 \(rehydrated on GET\): 7 event\(s\) on the wire: one minted_on_resume/);
  assert.match(text, /life 3 \(rehydrated on notifications\/cancelled\): no event sent: nothing on the wire shows it, no finding/);
  assert.match(text, /names the request whose stream carried the first of them \(created_by\)/);
  assert.match(text, /expect 1 minted_on_resume for this session from the proxy, where the server's own spans \(scenario 1\) show each of the 2 rehydration\(s\)/);
  assert.deepEqual(wireViewNote(result([])), []);
});

test('a run against your own detector ends with where its findings appear and that they take its decision window', () => {
  const text = externalDetectorNote('http://collector.example:4318', 1000).join('\n');
  assert.match(text, /spans exported to http:\/\/collector\.example:4318\/v1\/traces/);
  assert.match(text, /once its decision window has passed after the last span/);
  assert.match(text, /--decision-window-ms, default 10 s/);
  assert.match(text, /http:\/\/collector\.example:9464\/ui\//);
  assert.match(text, /http:\/\/collector\.example:9464\/api\/v1\/findings\?since=15m/);
});
