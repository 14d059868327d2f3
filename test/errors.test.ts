import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERROR_CODES, ForkwatchError, createError } from '../src/errors.js';

const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
const documented = new Set([...doc.matchAll(/^### (FORKWATCH_ERR_[A-Z0-9_]+)\s*$/gm)].map((m) => m[1]));

test('every error code is documented in docs/errors.md', () => {
  const missing = Object.keys(ERROR_CODES).filter((c) => !documented.has(c));
  assert.deepEqual(missing, []);
});

test('docs/errors.md documents no code that does not exist', () => {
  const stale = [...documented].filter((c) => !(c! in ERROR_CODES));
  assert.deepEqual(stale, []);
});

test('createError fills placeholders and carries code and status', () => {
  const e = createError('FORKWATCH_ERR_BODY_TOO_LARGE', 4194304);
  assert.ok(e instanceof ForkwatchError);
  assert.equal(e.code, 'FORKWATCH_ERR_BODY_TOO_LARGE');
  assert.equal(e.statusCode, 413);
  assert.equal(e.message, 'request body exceeds 4194304 bytes');
});
