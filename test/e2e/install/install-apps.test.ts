import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';
import { packInstrumentation, prepareApp, treeHolds, workDir, type AppKind } from './scratch-apps.js';

// Issue 26: the packed @forkwatch/instrumentation installed from the npm registry into scratch
// apps that have nothing of the repository's node_modules, each kind of app a user has:
// CommonJS and ESM, the SDK 1.x and the 2.x packages alone, an app with its own NodeSDK, an app
// missing the OpenTelemetry peers, an SDK outside the tested set. Every app runs a real MCP server
// and client over HTTP; its spans go over real OTLP/HTTP to the receiver here.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
// OpenTelemetry JS 3.x (api 1.10) needs Node >= 22.15; Node 20 gets the 2.x line.
const OTEL = major > 22 || (major === 22 && minor >= 15) ? { api: '1.10.0', js: '0.301.0' } : { api: '1.9.0', js: '0.223.0' };
const otel = { '@opentelemetry/api': OTEL.api, '@opentelemetry/sdk-node': OTEL.js, '@opentelemetry/instrumentation': OTEL.js, '@opentelemetry/exporter-trace-otlp-http': OTEL.js };
const SDK_1X = '1.32.2';
const SDK_1X_UNTESTED = '1.29.0';

const KINDS = {
  v1: { name: 'v1', dependencies: { '@modelcontextprotocol/sdk': SDK_1X, zod: '3.25.76', ...otel } },
  v2: { name: 'v2', dependencies: { '@modelcontextprotocol/server': '2.4.0', '@modelcontextprotocol/client': '2.4.0', '@modelcontextprotocol/node': '2.1.2', ...otel } },
  untested: { name: 'v1-untested', dependencies: { '@modelcontextprotocol/sdk': SDK_1X_UNTESTED, zod: '3.25.76', ...otel }, legacyPeerDeps: true },
} satisfies Record<string, AppKind>;

const REGISTER = '@forkwatch/instrumentation/register';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let receiver: OtlpReceiver;
let appReceiver: OtlpReceiver;
let work: string;
const apps: Record<keyof typeof KINDS | 'noPeers', string> = { v1: '', v2: '', untested: '', noPeers: '' };

function run(app: string, args: string[], service: string, extraEnv: Record<string, string> = {}): Promise<Run> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    OTEL_SERVICE_NAME: service,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
    OTEL_NODE_RESOURCE_DETECTORS: 'env',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    FORKWATCH_SESSION_SALT: 'install-test',
    FORKWATCH_REQUEST_SPAN_DELAY_MS: '0',
    ...extraEnv,
  };
  const child = spawn(process.execPath, args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

function assertRan(r: Run): void {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  assert.match(r.stdout, /RESULT hello over http/, `the tool call answered\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

const sides = (spans: ReceivedSpan[]): Set<unknown> => new Set(spans.filter((s) => s.name.startsWith('forkwatch.')).map((s) => s.attributes['forkwatch.side']));
const forkwatchLines = (stderr: string): string[] => stderr.split('\n').filter((l) => l.startsWith('forkwatch:'));

/** Runs the app and checks forkwatch spans of the given sides arrive at the receiver. */
async function expectSpans(app: string, args: string[], service: string, want: Array<'server' | 'client'>, extraEnv?: Record<string, string>): Promise<ReceivedSpan[]> {
  const r = await run(app, args, service, extraEnv);
  assertRan(r);
  const spans = await receiver.waitFor(service, (s) => want.every((side) => sides(s).has(side)));
  const names = [...new Set(spans.map((s) => s.name))];
  for (const side of want) assert.ok(sides(spans).has(side), `${service}: no forkwatch span from the ${side} side; got ${JSON.stringify(names)}\nstderr: ${r.stderr}`);
  assert.deepEqual(forkwatchLines(r.stderr), [], `no forkwatch notice on a supported app: ${r.stderr}`);
  return spans;
}

/** Runs the app and checks it ran uninstrumented with exactly one forkwatch line matching `line`. */
async function expectUninstrumented(app: string, args: string[], service: string, line: RegExp): Promise<void> {
  const r = await run(app, args, service);
  assertRan(r);
  const lines = forkwatchLines(r.stderr);
  assert.equal(lines.length, 1, `one forkwatch line, got:\n${r.stderr}`);
  assert.match(lines[0]!, line);
  // The app exited after its exporter's shutdown: whatever it would send has been sent.
  assert.deepEqual(sides(receiver.of(service)), new Set(), `no forkwatch spans from an uninstrumented app`);
}

describe('the packed instrumentation installed into scratch apps from the npm registry', { timeout: 600_000 }, () => {
  before(async () => {
    assert.ok(existsSync(join(ROOT, 'packages/instrumentation/dist/cjs/register-cjs.js')), 'build first: npm run build');
    receiver = await startOtlpReceiver();
    appReceiver = await startOtlpReceiver();
    work = workDir();
    const tarball = packInstrumentation(work);
    const started = Date.now();
    apps.v1 = prepareApp(KINDS.v1, tarball, work);
    apps.v2 = prepareApp(KINDS.v2, tarball, work);
    apps.untested = prepareApp(KINDS.untested, tarball, work);
    // The v1 app less the optional OpenTelemetry peers (npm installs @opentelemetry/api, a required peer, by itself).
    apps.noPeers = prepareApp({ ...KINDS.v1, name: 'v1-no-peers' }, tarball, work);
    for (const p of ['@opentelemetry/sdk-node', '@opentelemetry/instrumentation']) rmSync(join(apps.noPeers, 'node_modules', p), { recursive: true, force: true });
    console.log(`# scratch apps ready in ${((Date.now() - started) / 1000).toFixed(1)} s (installs cached under ~/.cache/forkwatch/install-apps)`);
  });
  after(async () => {
    await receiver?.close();
    await appReceiver?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('CommonJS app, SDK 1.x, zero code: node --require .../register app.cjs', async () => {
    await expectSpans(apps.v1, ['--require', REGISTER, 'v1-app.cjs'], 'cjs-require', ['server', 'client']);
  });

  test('CommonJS app, SDK 1.x, zero code: node --import .../register app.cjs', async () => {
    await expectSpans(apps.v1, ['--import', REGISTER, 'v1-app.cjs'], 'cjs-import', ['server', 'client']);
  });

  test("CommonJS app, SDK 1.x: its own NodeSDK with require('@forkwatch/instrumentation').McpForkInstrumentation", async () => {
    await expectSpans(apps.v1, ['v1-nodesdk.cjs'], 'cjs-nodesdk', ['server', 'client']);
  });

  test('ESM app, SDK 1.x, explicit: /server and /client under its own NodeSDK', async () => {
    await expectSpans(apps.v1, ['v1-explicit.mjs'], 'esm-explicit', ['server', 'client']);
  });

  test('ESM app with its own NodeSDK and exporter, run with --import .../register: forkwatch joins its provider, its own spans still reach its exporter', async () => {
    const service = 'own-sdk';
    const r = await run(apps.v1, ['--import', REGISTER, 'v1-own-sdk.mjs'], service, { APP_OTLP_URL: appReceiver.url });
    assertRan(r);
    const spans = await appReceiver.waitFor(service, (s) => s.some((x) => x.name === 'own-app.startup') && sides(s).has('server') && sides(s).has('client'));
    assert.ok(spans.some((s) => s.name === 'own-app.startup'), `the app's own span reached the app's exporter: ${JSON.stringify(spans.map((s) => s.name))}\n${r.stderr}`);
    assert.ok(sides(spans).has('server') && sides(spans).has('client'), `forkwatch spans went through the app's provider: ${JSON.stringify(spans.map((s) => s.name))}`);
    assert.deepEqual(receiver.of(service), [], "nothing went to /register's own exporter: no second SDK");
    const lines = forkwatchLines(r.stderr);
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /registered its own OpenTelemetry tracer provider/);
  });

  test('SDK 2.x packages alone: no @modelcontextprotocol/sdk anywhere in the app', () => {
    assert.equal(treeHolds(apps.v2, '@modelcontextprotocol/sdk'), false);
  });

  // Sessionful: spans from both sides. Stateless: answered calls emit no client span (by design,
  // docs/telemetry.md); the client side shows as the trace context it put in the request, which
  // the server's request.handled span joins (no parent without the client's instrumentation).
  for (const how of ['explicit', 'zero code'] as const) {
    const args = (mode: string): string[] => (how === 'explicit' ? ['v2-app.mjs', mode, 'explicit'] : ['--import', REGISTER, 'v2-app.mjs', mode]);
    const label = how === 'explicit' ? 'explicit: /server/v2 and /client/v2' : 'zero code: node --import .../register';
    test(`SDK 2.x alone, sessionful, ${label}`, async () => {
      await expectSpans(apps.v2, args('sessionful'), `v2-sessionful-${how}`, ['server', 'client']);
    });
    test(`SDK 2.x alone, stateless (createMcpHandler), ${label}`, async () => {
      const spans = await expectSpans(apps.v2, args('stateless'), `v2-stateless-${how}`, ['server']);
      const handled = spans.filter((s) => s.name === 'forkwatch.request.handled' && s.attributes['mcp.method.name'] === 'tools/call');
      assert.ok(handled.length > 0, JSON.stringify(spans));
      assert.ok(handled.every((s) => s.parentSpanId !== ''), `the client's trace context reached the server: ${JSON.stringify(handled)}`);
    });
  }

  for (const flag of ['--import', '--require'] as const) {
    test(`missing OpenTelemetry peers, ${flag} .../register: one line naming them, the app runs uninstrumented`, async () => {
      await expectUninstrumented(apps.noPeers, [flag, REGISTER, 'v1-app.cjs'], `no-peers${flag}`, /@opentelemetry\/instrumentation, @opentelemetry\/sdk-node are not installed.*runs uninstrumented.*npm install/);
    });
    test(`SDK ${SDK_1X_UNTESTED} (outside the tested set), ${flag} .../register: one line, the app runs uninstrumented`, async () => {
      await expectUninstrumented(apps.untested, [flag, REGISTER, 'v1-app.cjs'], `untested${flag}`, new RegExp(`@modelcontextprotocol/sdk ${SDK_1X_UNTESTED.replace(/\./g, '\\.')} is outside the versions .* NOT instrumented`));
    });
  }
});
