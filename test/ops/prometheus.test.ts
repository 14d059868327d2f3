import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { hasBinary, repoPath, run } from './ops-files.js';

const SKIP = hasBinary('promtool') ? false : 'promtool not found: bash scripts/install-test-deps.sh (or Debian: apt-get install prometheus)';

test('promtool check config accepts prometheus.yml and the rule files it loads', { skip: SKIP, timeout: 30_000 }, () => {
  const r = run('promtool', ['check', 'config', 'collector/prometheus/prometheus.yml']);
  assert.equal(r.status, 0, r.output);
  // The rule glob must match the committed rules, not silently nothing.
  assert.match(r.output, /SUCCESS: 1 rule files found/, r.output);
});

test('promtool check rules accepts every rule file', { skip: SKIP, timeout: 30_000 }, () => {
  const files = readdirSync(repoPath('collector/prometheus/rules')).filter((f) => f.endsWith('.yml'));
  assert.ok(files.length > 0);
  const r = run('promtool', ['check', 'rules', ...files.map((f) => `collector/prometheus/rules/${f}`)]);
  assert.equal(r.status, 0, r.output);
});

test('promtool unit tests of the alert rules pass', { skip: SKIP, timeout: 60_000 }, () => {
  const files = readdirSync(repoPath('collector/prometheus/tests')).filter((f) => f.endsWith('.test.yml'));
  assert.ok(files.length > 0);
  const r = run('promtool', ['test', 'rules', ...files.map((f) => `collector/prometheus/tests/${f}`)]);
  assert.equal(r.status, 0, r.output);
  assert.doesNotMatch(r.output, /FAILED/, r.output);
});
