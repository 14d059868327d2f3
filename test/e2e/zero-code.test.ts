import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startDetector, type DetectorProcess } from './helpers/detector.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const APP = fileURLToPath(new URL('../fixtures/zero-code/seed-app.mjs', import.meta.url));
const NODESDK_SETUP = fileURLToPath(new URL('../fixtures/zero-code/nodesdk-setup.mjs', import.meta.url));

/** Runs the seed app (no forkwatch code of its own) under `--import what`, exporting to `detector`. */
function runApp(importWhat: string, detector: DetectorProcess, service: string): Promise<{ code: number | null; out: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_OPTIONS: '',
    OTEL_EXPORTER_OTLP_ENDPOINT: detector.otlpUrl,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_SERVICE_NAME: service,
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
    FORKWATCH_SESSION_SALT: 'zero-code-salt',
    // Twice the scenario's timers, as test/e2e/seed.test.ts: at 1x a loaded machine changes the story.
    SEED_SCALE: '2',
  };
  // The app resolves @forkwatch/instrumentation from the repository root, as a user's app does
  // from its own node_modules: by package name, through "exports", to the built dist/.
  const child = spawn(process.execPath, ['--import', importWhat, APP], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })));
}

async function findingsOf(detector: DetectorProcess, service: string, kind: string, deadlineMs: number): Promise<Array<{ kind: string; service: string }>> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const res = await fetch(`${detector.httpUrl}/api/v1/findings?service=${service}`);
    const body = (await res.json()) as { items: Array<{ kind: string; service: string }> };
    if (body.items.some((f) => f.kind === kind) || Date.now() > until) return body.items;
    await new Promise((r) => setTimeout(r, 250));
  }
}

for (const [way, importWhat] of [
  ['zero code: node --import @forkwatch/instrumentation/register', '@forkwatch/instrumentation/register'],
  ['NodeSDK({ instrumentations: [new McpForkInstrumentation()] }) in a setup module', NODESDK_SETUP],
] as const) {
  test(`${way}: an app with no forkwatch code emits the seed's spans and the detector finds the fork`, { timeout: 90_000 }, async () => {
    const detector = await startDetector({ args: ['--decision-window-ms', '1000', '--tick-interval-ms', '100'] });
    try {
      const service = importWhat === NODESDK_SETUP ? 'nodesdk-app' : 'zero-code-app';
      const run = await runApp(importWhat, detector, service);
      assert.equal(run.code, 0, run.out);
      assert.match(run.out, /"rehydrated":[1-9]/, `the naive server rehydrated the session:\n${run.out}`);
      // The app exited on its own: the instrumentation's held spans and the exporter's queue were
      // flushed on the way out, or the detector would miss the late request spans.
      const items = await findingsOf(detector, service, 'minted_on_resume', 30_000);
      const kinds = new Set(items.map((f) => f.kind));
      assert.ok(kinds.has('minted_on_resume'), `findings: ${JSON.stringify(items.map((f) => f.kind))}\n${detector.output()}`);
      assert.ok(kinds.has('orphaned_progress_token'), `the hanging call is reported: ${JSON.stringify([...kinds])}`);
      assert.ok(items.every((f) => f.service === service));
    } finally {
      await detector.stop();
    }
  });
}
