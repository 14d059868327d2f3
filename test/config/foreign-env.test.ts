import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FOREIGN_FORKWATCH_ENV } from '../../src/config/defaults.js';

const INSTRUMENTATION_SRC = fileURLToPath(new URL('../../packages/instrumentation/src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

test('every FORKWATCH_* variable the instrumentation reads is one the detector knows is not its own', () => {
  const read = new Set<string>();
  for (const file of sources(INSTRUMENTATION_SRC)) {
    for (const m of readFileSync(file, 'utf8').matchAll(/\b(FORKWATCH_[A-Z0-9_]+)\b/g)) {
      if (!m[1]!.startsWith('FORKWATCH_ERR_')) read.add(m[1]!);
    }
  }
  assert.ok(read.has('FORKWATCH_SESSION_SALT'), 'the scan sees the instrumentation source');
  // A variable set for the app (e.g. in a shared .env) must not make the detector warn about it.
  assert.deepEqual([...read].filter((v) => !FOREIGN_FORKWATCH_ENV.has(v)).sort(), []);
});
