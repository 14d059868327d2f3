import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

// A child process without the test runner's `forkwatch-source` condition resolves the packages
// through package.json "exports" to the built dist/, exactly as a user's import does.
function importInChild(code: string): Record<string, string[]> {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  return JSON.parse(out) as Record<string, string[]>;
}

test('the entry points of both packages resolve by package name to dist/ and export their API', () => {
  const entries = ['forkwatch', '@forkwatch/instrumentation', '@forkwatch/instrumentation/server', '@forkwatch/instrumentation/client', '@forkwatch/instrumentation/wire', '@forkwatch/instrumentation/semconv', '@forkwatch/instrumentation/errors'];
  const exported = importInChild(`const r = {}; for (const e of ${JSON.stringify(entries)}) { const m = await import(e); r[e] = Object.keys(m).filter((k) => typeof m[k] === 'function'); r[e + ' url'] = [import.meta.resolve(e)]; } console.log(JSON.stringify(r));`);
  const expect: Record<string, string[]> = {
    forkwatch: ['startDetector', 'CorrelationEngine', 'decodeProtobuf', 'decodeJson', 'openStore', 'createMetrics', 'loadConfig'],
    '@forkwatch/instrumentation/server': ['createServerInstrumentation', 'createSessionGuard', 'GuardedEventStore'],
    '@forkwatch/instrumentation/client': ['createClientInstrumentation', 'createClientGuard', 'ForkGuard', 'SessionForkError', 'connectGuarded'],
    '@forkwatch/instrumentation/wire': ['SseParser', 'describeText', 'parseEventId', 'sessionKey', 'SpanEmitter'],
    '@forkwatch/instrumentation/errors': ['createError', 'InstrumentationError'],
  };
  for (const [entry, names] of Object.entries(expect)) {
    for (const name of names) assert.ok(exported[entry]!.includes(name), `${entry} exports ${name}`);
  }
  for (const entry of entries) assert.match(exported[`${entry} url`]![0]!, /\/dist\/.*\.js$/, `${entry} resolves to built JS`);
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
