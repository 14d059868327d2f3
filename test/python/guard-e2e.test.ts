/**
 * The Python client guard end to end: the seed's fork with the Python pair (an instrumented naive
 * server that reaps and rehydrates, an instrumented SDK client with the guard; test/fixtures/python/
 * guarded_pair.py, a real process over real HTTP), spans by OTLP/HTTP to the real detector. The
 * guarded client never hangs: its pending call fails with SessionForkError at the first resume; the
 * detector still sees the fork on the server side and no orphaned progress token (the guard failed it).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CLI, startDetector, type DetectorProcess } from '../e2e/helpers/detector.js';
import { pythonVenv, PYTHON_REQUIREMENTS } from '../e2e/helpers/python-venv.js';

const python = pythonVenv();
const skip =
  python === undefined
    ? `no Python virtualenv with ${PYTHON_REQUIREMENTS} (.ci/run creates it; or set FORKWATCH_PYTHON_VENV)`
    : !existsSync(CLI)
      ? 'dist/ not built (npm run build)'
      : false;
const SCRIPT = fileURLToPath(new URL('../fixtures/python/guarded_pair.py', import.meta.url));
const PYTHONPATH = fileURLToPath(new URL('../../python/src', import.meta.url));

const started: DetectorProcess[] = [];
after(async () => {
  await Promise.all(started.map((d) => d.kill()));
});

function runPair(otlpUrl: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env, PYTHONPATH, PYTHONDONTWRITEBYTECODE: '1', OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl, OTEL_BSP_SCHEDULE_DELAY: '200' };
    const child = spawn(python!, [SCRIPT], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

interface Finding {
  kind: string;
  sessionKey: string;
}

async function findingsFor(d: DetectorProcess, sessionKey: string, until: (f: Finding[]) => boolean, timeoutMs = 30_000): Promise<Finding[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${d.httpUrl}/api/v1/findings?limit=1000`);
    const items = ((await res.json()) as { items: Finding[] }).items.filter((f) => f.sessionKey === sessionKey);
    if (until(items) || Date.now() > deadline) return items;
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('python guard: the seed fork fails the pending call at once with SessionForkError; the detector sees the fork, no orphan', { skip, timeout: 150_000 }, async (t) => {
  const d = await startDetector();
  started.push(d);
  const r = await runPair(d.otlpUrl);
  assert.equal(r.code, 0, `${r.out}\n${r.err}`);
  const result = JSON.parse(r.out.trim().split('\n').pop()!) as { outcome: string; kind?: string; waited_s: number; session_key?: string };
  assert.equal(result.outcome, 'fork', r.out);
  assert.equal(result.kind, 'replay_gap');
  // The SDK's first resume comes after its 1 s retry delay; unguarded, the call waits 60 s.
  assert.ok(result.waited_s < 20, `waited ${result.waited_s} s`);
  const found = await findingsFor(d, result.session_key!, (f) => f.some((x) => x.kind === 'minted_on_resume'));
  const kinds = found.map((f) => f.kind).sort();
  t.diagnostic(`findings for the session: ${kinds.join(', ')}; failed after ${result.waited_s} s`);
  assert.ok(kinds.includes('minted_on_resume'), JSON.stringify(kinds));
  assert.ok(!kinds.includes('orphaned_progress_token'), JSON.stringify(kinds));
});
