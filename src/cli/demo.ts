import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { loadConfig } from '../config/load-config.js';
import { createError } from '../errors.js';
import { runSeedScenario } from '../demo/seed-scenario.js';
import { formatScenarioResult } from '../demo/format-scenario.js';
import type { ScenarioResult, SeedScenarioOptions } from '../demo/types.js';
import type { Finding } from '../model/finding.js';
import { createJsonLogger } from '../service/json-logger.js';
import { startDetector, type RunningDetector } from '../service/detector.js';
import { UI_PREFIX, uiFindingPath, uiSessionPath } from '../ui/ui-paths.js';
import { createForkwatchProxy } from '../proxy/index.js';
import { wireViewNote } from '../demo/wire-view-note.js';

const SCENARIOS = ['naive', 'guarded', 'healthy', 'proxy'] as const;
type Scenario = (typeof SCENARIOS)[number];

interface DemoFlags {
  otlpEndpoint?: string;
  scenarios: Scenario[];
  loop: boolean;
  keep: boolean;
  scale: number;
  intervalMs: number;
}

export const DEMO_USAGE = `forkwatch demo [flags]

Starts a detector (SQLite in a temp dir, ephemeral ports), a real MCP SDK server and client with
forkwatch instrumentation, and a fault-injecting TCP proxy between them; replays the seed's
sequence with scaled-down timers against a naive server (it forks), a guarded one (it does not),
and a healthy resume, and the naive server again, uninstrumented, behind \`forkwatch proxy\`; then
prints what the detector found, the metric lines and the incident view's URLs (/ui/findings/:id,
/ui/sessions/:key).

  --scenario naive|guarded|healthy|proxy|all   which runs (default all)
  --otlp-endpoint URL                    export to this detector/collector instead of starting one
  --loop                                 repeat forever (load for a stack), pause --interval-ms between
  --interval-ms N                        pause between loop iterations (default 2000)
  --scale X                              multiply every scenario timer (default 1)
  --keep                                 keep the detector running after the runs (Ctrl-C stops)`;

function parseFlags(argv: string[]): DemoFlags {
  const flags: DemoFlags = { scenarios: [...SCENARIOS], loop: false, keep: false, scale: 1, intervalMs: 2000 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      const v = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (v === undefined) throw createError('FORKWATCH_ERR_CLI_USAGE', `demo: ${name} needs a value`);
      return v;
    };
    switch (name) {
      case '--otlp-endpoint':
        flags.otlpEndpoint = value().replace(/\/+$/, '').replace(/\/v1\/traces$/, '');
        break;
      case '--scenario': {
        const v = value();
        if (v === 'all') flags.scenarios = [...SCENARIOS];
        else if ((SCENARIOS as readonly string[]).includes(v)) flags.scenarios = [v as Scenario];
        else throw createError('FORKWATCH_ERR_CLI_USAGE', `demo: --scenario must be naive, guarded, healthy, proxy or all, got ${JSON.stringify(v)}`);
        break;
      }
      case '--loop':
        flags.loop = true;
        break;
      case '--keep':
        flags.keep = true;
        break;
      case '--scale':
      case '--interval-ms': {
        const n = Number(value());
        if (!Number.isFinite(n) || n <= 0 || n > 1e6) throw createError('FORKWATCH_ERR_CLI_USAGE', `demo: ${name} must be a positive number`);
        if (name === '--scale') flags.scale = n;
        else flags.intervalMs = n;
        break;
      }
      default:
        throw createError('FORKWATCH_ERR_CLI_USAGE', `demo: unknown flag ${name} (try forkwatch demo --help)`);
    }
  }
  return flags;
}

const SERVICE: Record<Scenario, string> = {
  naive: 'mcp-demo-naive-server',
  guarded: 'mcp-demo-guarded-server',
  healthy: 'mcp-demo-healthy-server',
  proxy: 'mcp-demo-proxied-server',
};

const SCENARIO_OPTIONS: Record<Scenario, Pick<SeedScenarioOptions, 'server' | 'client' | 'healthy'>> = {
  naive: { server: 'naive', client: 'stock' },
  guarded: { server: 'guarded', client: 'guarded' },
  healthy: { server: 'naive', client: 'stock', healthy: true },
  proxy: { server: 'naive', client: 'stock' },
};

const TITLE: Record<Scenario, string> = {
  naive: 'the seed against a naive server (rehydrates unknown sessions) and the stock SDK client with an app-level dedup',
  guarded: "the same sequence against forkwatch's guarded server and guarded client",
  healthy: 'a healthy resume: the partition heals before the reaper runs',
  proxy: 'the naive server again, uninstrumented, behind `forkwatch proxy` (sidecar): the spans come from the wire',
};

function provider(endpoint: string, service: string): BasicTracerProvider {
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }), { scheduledDelayMillis: 200 })],
  });
}

async function runOne(scenario: Scenario, endpoint: string, salt: string, scale: number, print: (l: string) => void): Promise<ScenarioResult> {
  const server = provider(endpoint, SERVICE[scenario]);
  const client = provider(endpoint, 'mcp-demo-client');
  try {
    return await runSeedScenario({
      ...SCENARIO_OPTIONS[scenario],
      scale,
      salt,
      // The proxy scene: the server has no forkwatch code; the sidecar emits its spans.
      tracerProviders: scenario === 'proxy' ? { client } : { server, client },
      ...(scenario === 'proxy'
        ? {
            inFrontOfServer: async (upstream: string) => {
              const px = await createForkwatchProxy({ upstream, host: '127.0.0.1', port: 0, tracerProvider: server, salt });
              return { port: px.port, what: 'forkwatch proxy (sidecar)', close: () => px.close() };
            },
          }
        : {}),
      onStep: (s) => print(`  ${String(s.atMs).padStart(5)} ms  ${s.what}`),
    });
  } finally {
    await Promise.allSettled([server.forceFlush(), client.forceFlush()]);
    await Promise.allSettled([server.shutdown(), client.shutdown()]);
  }
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** Waits until the detector has decided: findings stop changing for two polls past the window. */
async function settledFindings(detector: RunningDetector, windowMs: number, expectSome: boolean): Promise<Finding[]> {
  const deadline = Date.now() + windowMs + 15_000;
  await new Promise((r) => setTimeout(r, windowMs));
  let last = -1;
  let stable = 0;
  for (;;) {
    const page = await getJson<{ items: Finding[] }>(`${detector.httpUrl}/api/v1/findings?limit=100`);
    if (page.items.length === last && (page.items.length > 0 || !expectSome)) stable++;
    else stable = 0;
    last = page.items.length;
    if (stable >= 2 || Date.now() > deadline) return page.items;
    await new Promise((r) => setTimeout(r, 400));
  }
}

/** `forkwatch demo`. */
export async function runDemo(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${DEMO_USAGE}\n`);
    return 0;
  }
  const flags = parseFlags(argv);
  const print = (line: string): void => void process.stdout.write(`${line}\n`);
  const salt = process.env.FORKWATCH_SESSION_SALT ?? randomBytes(8).toString('hex');
  const windowMs = 1000;
  let detector: RunningDetector | undefined;
  let endpoint = flags.otlpEndpoint;
  if (!endpoint) {
    const dir = mkdtempSync(join(tmpdir(), 'forkwatch-demo-'));
    const { config } = loadConfig({
      overrides: { host: '127.0.0.1', otlpPort: 0, otlpGrpcPort: 0, httpPort: 0, db: join(dir, 'forkwatch.db'), decisionWindowMs: windowMs, tickIntervalMs: 100, logLevel: 'error' },
    });
    detector = await startDetector(config, createJsonLogger('error'));
    endpoint = detector.otlpUrl;
    print(`forkwatch detector: OTLP ${detector.otlpUrl}/v1/traces, API ${detector.httpUrl}, SQLite ${config.db}`);
  } else {
    print(`exporting spans to ${endpoint}/v1/traces`);
  }
  try {
    let iteration = 0;
    do {
      iteration++;
      for (const [i, scenario] of flags.scenarios.entries()) {
        print('');
        print(`${i + 1}/${flags.scenarios.length}  ${TITLE[scenario]}  [server service.name=${SERVICE[scenario]}]`);
        let result: ScenarioResult;
        try {
          result = await runOne(scenario, endpoint, salt, flags.scale, print);
        } catch (err) {
          // As load for a stack (--loop), one run that fails (a timer lost on a busy host) must
          // not end the load; a single run still fails loudly.
          if (!flags.loop) throw err;
          print(`  run failed, the loop goes on: ${err instanceof Error ? err.message : String(err)}`);
          continue;
        }
        for (const line of formatScenarioResult(result)) print(line);
        if (scenario === 'proxy') for (const line of wireViewNote(result)) print(line);
      }
      if (flags.loop) await new Promise((r) => setTimeout(r, flags.intervalMs));
    } while (flags.loop && iteration < Number.MAX_SAFE_INTEGER);
    if (!detector) {
      print('');
      for (const line of externalDetectorNote(endpoint, windowMs)) print(line);
      return 0;
    }
    print('');
    print(`what the detector found (after its ${windowMs} ms decision window):`);
    const findings = await settledFindings(detector, windowMs, flags.scenarios.includes('naive') || flags.scenarios.includes('proxy'));
    for (const scenario of flags.scenarios) {
      // In the order things happened: the story of the fork reads top to bottom.
      const mine = findings.filter((f) => f.service === SERVICE[scenario]).sort((a, b) => a.firstSeenMs - b.firstSeenMs);
      print('');
      print(`  ${SERVICE[scenario]}: ${mine.length === 0 ? 'no findings' : `${mine.length} finding(s)`}`);
      for (const f of mine) {
        print(`    ${f.kind.padEnd(24)} ${f.summary}`);
        print(`    ${''.padEnd(24)} ${detector.httpUrl}${uiFindingPath(f.id)}`);
      }
      if (mine[0]) print(`    session timeline: ${detector.httpUrl}${uiSessionPath(mine[0].sessionKey)}  (JSON: ${detector.httpUrl}/api/v1/sessions/${mine[0].sessionKey})`);
    }
    const metrics = await (await fetch(`${detector.httpUrl}/metrics`)).text();
    const lines = metrics
      .split('\n')
      .filter((l) => /^forkwatch_(forks_total|orphaned_progress_tokens|progress_tokens_orphaned_total|resumes_total)\{/.test(l) && !/ 0$/.test(l));
    print('');
    print('metric lines (non-zero):');
    for (const l of lines) print(`  ${l}`);
    print('');
    print(`where to look: ${detector.httpUrl}${UI_PREFIX}/ (incident view)  ·  ${detector.httpUrl}/api/v1/findings  ·  ${detector.httpUrl}/metrics  ·  docs/runbook.md`);
    if (!flags.keep) print('(the demo detector stops when the demo exits: rerun with --keep to browse these URLs)');
    if (flags.keep) {
      print('detector keeps running (--keep); Ctrl-C stops it');
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      });
    }
    return 0;
  } finally {
    await detector?.close();
  }
}

/**
 * The end of a run against a detector of one's own (`--otlp-endpoint`): where the findings will
 * appear, and that they take that detector's decision window after the last span.
 */
export function externalDetectorNote(endpoint: string, demoWindowMs: number): string[] {
  let api = 'http://<detector>:9464';
  try {
    const u = new URL(endpoint);
    api = `${u.protocol}//${u.hostname.includes(':') ? `[${u.hostname}]` : u.hostname}:9464`;
  } catch {
    // keep the placeholder
  }
  return [
    `spans exported to ${endpoint}/v1/traces; the findings appear on that detector once its decision window has passed after the last span`,
    `(--decision-window-ms, default 10 s; this demo's own detector uses ${demoWindowMs} ms), then:`,
    `  incident view: ${api}/ui/   findings: curl -s '${api}/api/v1/findings?since=15m' | jq '.items[] | {kind, service, summary}'`,
    '  (9464 is the default --http-port; use your detector\'s API address if it differs)',
  ];
}
