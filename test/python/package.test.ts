/**
 * The Python instrumentation package (python/, import `forkwatch_instrumentation`): its ruff check and
 * its pytest suite (python/tests: the real `mcp` SDK over real HTTP, a real `opentelemetry-instrument`
 * subprocess), run with the virtualenv `.ci/run` builds (test/e2e/helpers/python-venv.ts), so
 * `npm test` runs them. Skipped with a message where that virtualenv is absent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pythonVenv, PYTHON_REQUIREMENTS } from '../e2e/helpers/python-venv.js';

const python = pythonVenv();
const skip = python === undefined ? `no Python virtualenv with ${PYTHON_REQUIREMENTS} (.ci/run creates it; or set FORKWATCH_PYTHON_VENV)` : false;
const PACKAGE = fileURLToPath(new URL('../../python/', import.meta.url));

function run(args: string[], timeoutMs: number): { status: number | null; out: string } {
  // The sources under test are the clone's (PYTHONPATH first), whatever copy the venv holds.
  const env = { ...process.env, PYTHONPATH: join(PACKAGE, 'src'), PYTHONDONTWRITEBYTECODE: '1' };
  const r = spawnSync(python!, args, { cwd: PACKAGE, env, encoding: 'utf8', timeout: timeoutMs });
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

test('python/: ruff check is clean', { skip, timeout: 60_000 }, () => {
  const ruff = join(dirname(python!), 'ruff');
  const r = spawnSync(ruff, ['check', '--no-cache', '.'], { cwd: PACKAGE, encoding: 'utf8', timeout: 50_000 });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}${r.error ?? ''}`);
});

test('python/: pytest passes (and collects tests: exit 5, none collected, fails here)', { skip, timeout: 300_000 }, () => {
  const r = run(['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], 280_000);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /\d+ passed/, r.out);
});
