import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDetector, type DetectorProcess } from './helpers/detector.js';

// A user's view of the instrumentation package: packed as npm would publish it, installed into a
// fresh MCP app next to the SDK and the OpenTelemetry NodeSDK, and run with zero code. The app is
// the demo's seed (copied from dist/demo: it imports only the SDK, zod, the OpenTelemetry api and
// @forkwatch/instrumentation), so what forks is the app's own copy of the SDK.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NPM = 'npm';
const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
// OpenTelemetry JS 3.x (api 1.10) needs Node >= 22.15; Node 20 gets the 2.x line.
const OTEL = major > 22 || (major === 22 && minor >= 15) ? { api: '1.10.0', sdkNode: '0.301.0', line: '3.x' } : { api: '1.9.0', sdkNode: '0.223.0', line: '2.x' };
const OLDEST_SDK_TESTED_HERE = '1.31.0';

function npm(args: string[], cwd: string): string {
  return execFileSync(NPM, args, { cwd, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', npm_config_audit: 'false', npm_config_fund: 'false' }, stdio: ['ignore', 'pipe', 'pipe'] });
}

function filesNamed(dir: string, match: (name: string, path: string) => boolean, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) filesNamed(p, match, out);
    else if (match(e.name, p)) out.push(p);
  }
  return out;
}

function duBytes(dir: string): number {
  let n = 0;
  for (const f of filesNamed(dir, () => true)) n += statSync(f).size;
  return n;
}

async function runSeed(app: string, detector: DetectorProcess, service: string): Promise<string> {
  const env = {
    ...process.env,
    NODE_OPTIONS: '',
    OTEL_EXPORTER_OTLP_ENDPOINT: detector.otlpUrl,
    OTEL_SERVICE_NAME: service,
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
  };
  const child = spawn(process.execPath, ['--import', '@forkwatch/instrumentation/register', 'app.mjs'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  assert.equal(code, 0, out);
  return out;
}

async function waitForKind(detector: DetectorProcess, service: string, kind: string): Promise<string[]> {
  const until = Date.now() + 30_000;
  for (;;) {
    const body = (await (await fetch(`${detector.httpUrl}/api/v1/findings?service=${service}`)).json()) as { items: Array<{ kind: string }> };
    const kinds = body.items.map((f) => f.kind);
    if (kinds.includes(kind) || Date.now() > until) return kinds;
    await new Promise((r) => setTimeout(r, 250));
  }
}

test(`npm-packed @forkwatch/instrumentation in a fresh app (SDK ${OLDEST_SDK_TESTED_HERE} and the newest 1.x, OpenTelemetry JS ${OTEL.line}): no native build, one SDK copy, zero code finds the fork`, { timeout: 420_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'forkwatch-pack-'));
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', work, '-w', '@forkwatch/instrumentation'], ROOT)) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const tarball = join(work, packed[0]!.filename);
  assert.ok(packed[0]!.files.some((f) => f.path === 'dist/register.js'), 'the tarball carries dist/');

  const app = join(work, 'app');
  cpSync(join(ROOT, 'dist/demo'), join(app, 'demo'), { recursive: true, filter: (src) => !src.endsWith('.map') && !src.endsWith('.d.ts') });
  writeFileSync(join(app, 'demo/package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({
      name: 'fresh-mcp-app',
      private: true,
      type: 'module',
      dependencies: {
        '@forkwatch/instrumentation': `file:${tarball}`,
        '@modelcontextprotocol/sdk': OLDEST_SDK_TESTED_HERE,
        '@opentelemetry/api': OTEL.api,
        '@opentelemetry/sdk-node': OTEL.sdkNode,
        zod: '^3.25.0',
      },
    }),
  );
  writeFileSync(
    join(app, 'app.mjs'),
    "const { runSeedScenario } = await import('./demo/index.js');\nconst r = await runSeedScenario({ server: 'naive', client: 'stock', scale: 2 });\nconsole.log(JSON.stringify({ rehydrated: r.sessions.rehydrated }));\n",
  );

  const detector = await startDetector({ args: ['--decision-window-ms', '1000', '--tick-interval-ms', '100'] });
  try {
    const newest = (JSON.parse(npm(['view', '@modelcontextprotocol/sdk@^1', 'version', '--json'], work)) as string[] | string);
    const newest1x = Array.isArray(newest) ? newest[newest.length - 1]! : newest;
    for (const [i, sdk] of [OLDEST_SDK_TESTED_HERE, newest1x].entries()) {
      if (i === 0) npm(['install'], app);
      else npm(['install', `@modelcontextprotocol/sdk@${sdk}`], app);
      const nm = join(app, 'node_modules');
      // No native build: nothing compiled, no binding.gyp anywhere in the app's tree.
      const native = filesNamed(nm, (n) => n.endsWith('.node') || n === 'binding.gyp');
      assert.deepEqual(native, [], 'native code in a fresh app with the instrumentation');
      const sdkCopies = filesNamed(nm, (n, p) => n === 'package.json' && p.endsWith(join('@modelcontextprotocol', 'sdk', 'package.json')));
      assert.equal(sdkCopies.length, 1, `one copy of the MCP SDK: ${sdkCopies.join(', ')}`);
      const service = `fresh-app-${sdk.replace(/\./g, '-')}`;
      const out = await runSeed(app, detector, service);
      assert.match(out, /"rehydrated":[1-9]/, out);
      const kinds = await waitForKind(detector, service, 'minted_on_resume');
      assert.ok(kinds.includes('minted_on_resume'), `SDK ${sdk}: findings ${JSON.stringify(kinds)}`);
      console.log(`# SDK ${sdk}, OpenTelemetry JS ${OTEL.line}: app node_modules ${(duBytes(nm) / 1e6).toFixed(1)} MB, findings ${JSON.stringify([...new Set(kinds)])}`);
    }
  } finally {
    await detector.stop();
  }
});
