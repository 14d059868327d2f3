import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as semconv from '../packages/instrumentation/src/semconv.js';

// docs/telemetry.md is the normative schema: every span and attribute name the code emits or reads
// is defined there, and every forkwatch.* name it defines exists in the code (as test/errors.test.ts
// does for error codes).
const DOC = readFileSync(new URL('../docs/telemetry.md', import.meta.url), 'utf8');
const NAMES = Object.entries(semconv).filter(([k, v]) => /^(ATTR|SPAN|METRIC)_/.test(k) && typeof v === 'string') as Array<[string, string]>;

test('every ATTR_*/SPAN_*/METRIC_* name in semconv.ts is defined in docs/telemetry.md', () => {
  assert.ok(NAMES.length > 30, 'semconv names found');
  const missing = NAMES.filter(([, v]) => !DOC.includes(`\`${v}\``)).map(([k, v]) => `${k} = ${v}`);
  assert.deepEqual(missing, []);
});

test('every forkwatch.* name docs/telemetry.md defines exists in semconv.ts', () => {
  const values = new Set(NAMES.map(([, v]) => v));
  const documented = [...new Set([...DOC.matchAll(/`(forkwatch\.[a-z0-9_.]+)`/g)].map((m) => m[1]!))];
  assert.ok(documented.length > 20);
  assert.deepEqual(documented.filter((n) => !values.has(n) && !n.endsWith('.')), []);
});

// "Every name against the conventions": each name semconv.ts defines has a verdict there (same,
// extension or divergence), and each row names something semconv.ts defines.
const TABLE = DOC.slice(DOC.indexOf('## Every name against the conventions'));
const ROWS = [...TABLE.slice(0, TABLE.indexOf('\nNot emitted')).matchAll(/^\| `([^`]+)` \| (\w+) \| (\w+) \|/gm)].map((m) => ({ name: m[1]!, kind: m[2]!, verdict: m[3]! }));

test('every name docs/telemetry.md rates against the MCP conventions is same, extension or divergence', () => {
  assert.ok(ROWS.length > 20, 'rows found');
  assert.deepEqual(ROWS.filter((r) => !['same', 'extension', 'divergence'].includes(r.verdict)), []);
  assert.deepEqual(ROWS.filter((r) => r.name.startsWith('forkwatch.') && r.verdict === 'same'), [], 'a forkwatch.* name cannot be the conventions\' own');
});

test('every non-forkwatch name and every span name in semconv.ts has its verdict in that table, and the table names nothing else', () => {
  const rated = new Set(ROWS.map((r) => r.name));
  const mustRate = NAMES.filter(([k, v]) => !v.endsWith('.') && (!v.startsWith('forkwatch.') || k.startsWith('SPAN_')));
  assert.deepEqual(mustRate.filter(([, v]) => !rated.has(v)).map(([k, v]) => `${k} = ${v}`), []);
  const values = new Set(NAMES.map(([, v]) => v));
  assert.deepEqual(ROWS.filter((r) => !values.has(r.name) && !r.name.includes('{')).map((r) => r.name), []);
});
