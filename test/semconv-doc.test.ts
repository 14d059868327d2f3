import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as semconv from '../packages/instrumentation/src/semconv.js';

// docs/telemetry.md is the normative schema: every span and attribute name the code emits or reads
// is defined there, and every forkwatch.* name it defines exists in the code (as test/errors.test.ts
// does for error codes).
const DOC = readFileSync(new URL('../docs/telemetry.md', import.meta.url), 'utf8');
const NAMES = Object.entries(semconv).filter(([k, v]) => /^(ATTR|SPAN)_/.test(k) && typeof v === 'string') as Array<[string, string]>;

test('every ATTR_*/SPAN_* name in semconv.ts is defined in docs/telemetry.md', () => {
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
