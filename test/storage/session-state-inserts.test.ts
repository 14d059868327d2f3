import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSqlite } from '../../src/storage/sqlite-driver.js';
import { openStore } from '../../src/storage/open-store.js';
import type { SessionStateChange } from '../../src/storage/store.js';

const Database = loadSqlite();

function tempDb(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-inserts-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'fw.db');
}

// New sessions are inserted in multi-row statements of 64, 16, 4 and 1 rows with ids the store
// gives: 150 = 2 x 64 + 16 + 4 + 2 x 1 uses every size, and every row must land under its own key.
test('a commit of many new sessions stores each under its key, in order, with its log, and reopens the same', (t) => {
  const path = tempDb(t);
  const store = openStore({ path });
  store.commit({ findings: [], states: [{ key: 'old', state: 'o' }, { key: 'gone', state: 'g' }] });
  const states: SessionStateChange[] = [{ key: 'gone', state: null }];
  for (let i = 0; i < 150; i++) states.push({ key: `k${i}`, state: Uint8Array.of(3, i), ...(i % 50 === 7 ? { log: [Uint8Array.of(4, i)] } : {}) });
  // A key listed again after its insert (as a failed commit's retry merges them): its row exists before it changes.
  states.push({ key: 'k3', state: 'k3 again' }, { key: 'old', state: 'o2' }, { key: 'k149', log: [Uint8Array.of(4, 255)] });
  store.commit({ findings: [], states });
  const expect = (s: ReturnType<typeof store.loadSessionStates>): void => {
    const all = [...s];
    assert.equal(all.length, 151);
    assert.deepEqual(all[0], { key: 'old', state: 'o2' });
    for (let i = 0; i < 150; i++) {
      const r = all[i + 1]!;
      assert.equal(r.key, `k${i}`, 'in the order they were committed');
      if (i === 3) assert.equal(r.state, 'k3 again');
      else assert.deepEqual([...(r.state as Uint8Array)], [3, i]);
      const log = i === 149 ? [[4, 255]] : i % 50 === 7 ? [[4, i]] : undefined;
      assert.deepEqual(r.log?.map((c) => [...c]), log, `k${i}'s log`);
    }
  };
  expect(store.loadSessionStates());
  assert.equal(store.getSessionState('gone'), undefined);
  // The next commit's new rows take ids after these, and updates find the rows just inserted.
  store.commit({ findings: [], states: [{ key: 'k0', state: 'k0 b' }, { key: 'new', state: 'n' }] });
  assert.equal(store.getSessionState('k0'), 'k0 b');
  assert.equal(store.getSessionState('new'), 'n');
  store.close();
  const raw = new Database(path, { readonly: true });
  t.after(() => raw.close());
  assert.equal((raw.prepare('SELECT count(*) AS n FROM session_state').get() as { n: number }).n, 152, 'one row per key');
  const back = openStore({ path });
  t.after(() => back.close());
  const all = [...back.loadSessionStates()];
  assert.equal(all.at(-1)!.key, 'new');
  assert.equal(back.getSessionState('k0'), 'k0 b');
  expect(all.filter((r) => r.key !== 'new').map((r) => (r.key === 'k0' ? { ...r, state: Uint8Array.of(3, 0) } : r)));
});
