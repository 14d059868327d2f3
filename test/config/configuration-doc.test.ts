import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DEFAULT_CONFIG, type ConfigKey } from '../../src/config/defaults.js';
import { envName, flagName } from '../../src/config/load-config.js';

const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
const rows = new Map<string, string>();
for (const m of doc.matchAll(/^\| `--([a-z-]+)` \| `([A-Z_]+)` \| ([^|]+) \|/gm)) rows.set(m[1]!, `${m[2]}|${m[3]}`);

test('docs/configuration.md has one row per setting, with its env var and default', () => {
  for (const key of Object.keys(DEFAULT_CONFIG) as ConfigKey[]) {
    const row = rows.get(flagName(key));
    assert.ok(row, `no row for --${flagName(key)}`);
    const [env, def] = row.split('|') as [string, string];
    assert.equal(env, envName(key));
    const value = DEFAULT_CONFIG[key];
    if (value === '') assert.match(def, /empty/);
    else assert.ok(def.includes(`\`${String(value)}\``), `--${flagName(key)}: default ${String(value)} not in "${def}"`);
  }
  assert.equal(rows.size, Object.keys(DEFAULT_CONFIG).length, 'the page documents a setting that does not exist');
});
