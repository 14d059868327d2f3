import { test } from 'node:test';
import assert from 'node:assert/strict';

// Self-reference by package name resolves through package.json "exports" to the built dist/,
// exactly as a user's `import ... from 'forkwatch/server'` does.
test('the three entry points resolve by package name and export their API', async () => {
  const root = await import('forkwatch');
  for (const name of ['startDetector', 'CorrelationEngine', 'decodeProtobuf', 'decodeJson', 'openStore', 'createMetrics', 'loadConfig']) {
    assert.equal(typeof (root as Record<string, unknown>)[name], 'function', `forkwatch exports ${name}`);
  }
  const server = await import('forkwatch/server');
  for (const name of ['createServerInstrumentation', 'createSessionGuard', 'GuardedEventStore']) {
    assert.equal(typeof (server as Record<string, unknown>)[name], 'function', `forkwatch/server exports ${name}`);
  }
  const client = await import('forkwatch/client');
  for (const name of ['createClientInstrumentation', 'createClientGuard', 'ForkGuard', 'SessionForkError', 'connectGuarded']) {
    assert.equal(typeof (client as Record<string, unknown>)[name], 'function', `forkwatch/client exports ${name}`);
  }
});

test('the CLI is declared as a bin', async () => {
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { bin: Record<string, string> };
  assert.equal(pkg.bin.forkwatch, 'dist/cli/bin.js');
});

test('the npm scripts a newcomer runs point at the CLI entry that runs', async () => {
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };
  for (const script of ['demo', 'serve']) {
    assert.ok(pkg.scripts[script]!.includes(`node ${pkg.bin.forkwatch} ${script}`), `${script}: ${pkg.scripts[script]}`);
  }
});
