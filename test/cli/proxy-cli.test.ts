import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { CLI } from '../e2e/helpers/detector.js';
import { parseProxyFlags } from '../../src/cli/proxy.js';

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const r = spawnSync(process.execPath, [CLI, ...args], { env, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('forkwatch proxy --help documents every flag the parser takes', () => {
  const r = cli(['proxy', '--help']);
  assert.equal(r.status, 0);
  const flags = new Set([...r.stdout.matchAll(/^\s+(--[a-z-]+)/gm)].map((m) => m[1]!));
  for (const f of ['--upstream', '--host', '--port', '--guard', '--otlp-endpoint', '--service-name', '--guard-hold-ms', '--connect-timeout-ms', '--headers-timeout-ms', '--stream-idle-timeout-ms', '--max-sessions', '--session-idle-ttl-ms', '--max-event-chars', '--max-tracked-event-ids', '--max-parse-bytes', '--max-connections', '--upstream-max-sockets', '--request-span-delay-ms', '--record-raw-session-id']) {
    assert.ok(flags.has(f), `${f} in --help`);
  }
  // And every documented flag parses.
  for (const f of flags) {
    const args = ['--upstream', 'http://127.0.0.1:1'];
    if (!['--upstream', '--guard', '--record-raw-session-id'].includes(f)) args.push(f, f === '--host' ? '127.0.0.1' : f === '--otlp-endpoint' ? 'http://x:4318' : f === '--service-name' ? 's' : '5');
    else if (f !== '--upstream') args.push(f);
    assert.doesNotThrow(() => parseProxyFlags(args), f);
  }
  assert.match(cli(['--help']).stdout, /forkwatch proxy --upstream URL/);
});

test('bad proxy usage exits 2 with one line', () => {
  for (const args of [['proxy'], ['proxy', '--upstream', 'http://127.0.0.1:1', '--port', 'x'], ['proxy', '--upstream', 'http://127.0.0.1:1', '--bogus'], ['proxy', '--upstream', 'ftp://nope']]) {
    const r = cli(args);
    assert.equal(r.status, 2, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
