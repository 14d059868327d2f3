import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CLI, startDetector } from '../e2e/helpers/detector.js';

/** Captures of the instrumentation that emitted every SSE event (''), and of today's (on-moment/). */
const DIRS = ['', 'on-moment/'];
const fixture = (name: string, dir = ''): string => fileURLToPath(new URL(`../fixtures/otlp/${dir}${name}.jsonl`, import.meta.url));

function cli(args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  // The test harness's own FORKWATCH_* variables (FORKWATCH_PYTHON_VENV in CI) are not the detector's: the
  // detector would rightly warn about them and the one-line assertions below would see that warning.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FORKWATCH_')));
  const clean: NodeJS.ProcessEnv = { ...inherited, ...env };
  delete clean.NODE_OPTIONS;
  const r = spawnSync(process.execPath, [CLI, ...args], { env: clean, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('--help lists the commands; serve --help lists every flag with its env var', () => {
  const top = cli(['--help']);
  assert.equal(top.status, 0);
  for (const c of ['serve', 'demo', 'analyze']) assert.match(top.stdout, new RegExp(`forkwatch ${c}`));
  const serve = cli(['serve', '--help']);
  assert.equal(serve.status, 0);
  for (const f of ['--otlp-port', '--http-port', '--host', '--db', '--auth-token', 'FORKWATCH_OTLP_PORT', 'FORKWATCH_DB']) assert.ok(serve.stdout.includes(f), f);
});

test('a bad flag or value exits 2 with one line naming it', () => {
  const r = cli(['serve', '--otlp-port', 'seventy', '--bogus']);
  assert.equal(r.status, 2);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /--otlp-port/);
  assert.match(lines[0]!, /--bogus/);
  const env = cli(['serve'], { FORKWATCH_HTTP_PORT: '-1' });
  assert.equal(env.status, 2);
  assert.match(env.stderr, /FORKWATCH_HTTP_PORT/);
  assert.equal(cli(['frobnicate']).status, 2);
  assert.equal(cli(['demo', '--scenario', 'nope']).status, 2);
});

test('serve drains on SIGTERM and exits 0', { timeout: 60_000 }, async () => {
  const d = await startDetector();
  const health = await fetch(`${d.httpUrl}/healthz`);
  assert.equal(health.status, 200);
  assert.equal((await fetch(`${d.httpUrl}/readyz`)).status, 200);
  assert.equal(await d.stop(), 0);
  assert.match(d.output(), /detector stopped/);
});

for (const dir of DIRS) {
test(`analyze ${dir || 'per-event'}: the naive capture shows the fork and the orphaned token, exit 1`, () => {
  const r = cli(['analyze', fixture('seed-naive-stock', dir)]);
  assert.equal(r.status, 1, r.stderr);
  for (const kind of ['minted_on_resume', 'sequence_regression', 'dedup_loss', 'orphaned_progress_token']) {
    assert.match(r.stdout, new RegExp(`^${kind}`, 'm'), kind);
  }
  const json = JSON.parse(cli(['analyze', '--json', fixture('seed-naive-stock', dir)]).stdout) as { findings: Array<{ kind: string }> };
  assert.ok(json.findings.length >= 4);
});

test(`analyze ${dir || 'per-event'}: a guarded server with the stock SDK client still leaves an orphaned token (the SDK ignores the 404)`, () => {
  const r = cli(['analyze', fixture('seed-guarded-stock', dir)]);
  assert.equal(r.status, 1, r.stdout);
  assert.match(r.stdout, /^orphaned_progress_token/m);
  assert.doesNotMatch(r.stdout, /^(minted_on_resume|incarnation_changed|sequence_regression|replay_gap|dedup_loss)/m);
});

test(`analyze ${dir || 'per-event'}: healthy and fully guarded captures are clean, exit 0`, () => {
  for (const name of ['healthy-resume', 'seed-guarded-guarded']) {
    const r = cli(['analyze', fixture(name, dir)]);
    assert.equal(r.status, 0, `${name}: ${r.stdout}`);
    assert.match(r.stdout, /no forks, no orphaned progress tokens/);
  }
});

}

test('analyze: usage errors exit 2', () => {
  assert.equal(cli(['analyze']).status, 2);
  assert.equal(cli(['analyze', '/nonexistent/file.jsonl']).status, 2);
});

test('serve on a port already in use: one FORKWATCH_ERR_LISTEN line naming the address and the flag, exit 1, no stack', { timeout: 60_000 }, async (t) => {
  const { createServer } = await import('node:net');
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen({ host: '127.0.0.1', port: 0 }, resolve));
  t.after(() => busy.close());
  const port = (busy.address() as { port: number }).port;
  for (const flag of ['--otlp-grpc-port', '--http-port', '--otlp-port']) {
    const ports: Record<string, string> = { '--otlp-port': '0', '--otlp-grpc-port': '0', '--http-port': '0', [flag]: String(port) };
    const r = cli(['serve', '--host', '127.0.0.1', '--db', ':memory:', ...Object.entries(ports).flat()]);
    assert.equal(r.status, 1, `${flag}: ${r.stderr}`);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, `${flag}: one line, got ${r.stderr}`);
    assert.match(lines[0]!, new RegExp(`^forkwatch: FORKWATCH_ERR_LISTEN: cannot listen on 127\\.0\\.0\\.1:${port}: the port is already in use; .*${flag}`));
    assert.doesNotMatch(r.stderr, /\n\s+at |No address added/);
  }
});

test('analyze --help says what --json prints: one object {spans, badLines, findings}', () => {
  const top = cli(['--help']);
  assert.match(top.stdout, /--json prints one JSON object: \{spans, badLines,\s+findings\}/);
  const json = JSON.parse(cli(['analyze', '--json', fixture('seed-naive-stock')]).stdout) as Record<string, unknown>;
  assert.deepEqual(Object.keys(json).sort(), ['badLines', 'findings', 'spans']);
});
