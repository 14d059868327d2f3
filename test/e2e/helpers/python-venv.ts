import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The pinned requirements of the Python fixtures; `scripts/install-test-deps.sh` (run by `.ci/run`) builds a virtualenv from them. */
export const PYTHON_REQUIREMENTS = fileURLToPath(new URL('../../fixtures/python/requirements.txt', import.meta.url));
/** The Python package's pyproject.toml: part of the venv's cache key (`scripts/install-test-deps.sh` installs python/ into it). */
export const PYTHON_PYPROJECT = fileURLToPath(new URL('../../../python/pyproject.toml', import.meta.url));

/**
 * The virtualenv's python: `FORKWATCH_PYTHON_VENV`, else where `scripts/install-test-deps.sh` creates it,
 * `${XDG_CACHE_HOME:-~/.cache}/forkwatch/venv-<first 12 hex of sha256(requirements.txt + python/pyproject.toml)>`.
 * Undefined when absent (tests skip; CI fails before that in `scripts/install-test-deps.sh`).
 */
export function pythonVenv(): string | undefined {
  const hash = createHash('sha256').update(readFileSync(PYTHON_REQUIREMENTS)).update(readFileSync(PYTHON_PYPROJECT)).digest('hex').slice(0, 12);
  const dir = process.env.FORKWATCH_PYTHON_VENV ?? join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'forkwatch', `venv-${hash}`);
  const python = join(dir, 'bin', 'python');
  return existsSync(python) ? python : undefined;
}
