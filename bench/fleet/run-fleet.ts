/**
 * `npm run bench -- fleet`: a fleet through the real pipeline, each part its own process.
 *
 * - `instrumented` app (bench/fleet/fleet-app.ts): SDK 1.x server and clients, both instrumented,
 *   OTLP/protobuf -> the gateway; the bulk mix plus seed-scenario stream breaks and forks.
 * - `plain` app: the same app and the same calls without forkwatch, its bulk calls through a
 *   `forkwatch proxy` process (the sidecar) in front of its own stock server. Its CPU is the
 *   baseline of the instrumented app's: instrumentation CPU = instrumented - plain, side by side.
 * - the OpenTelemetry Collector on the shipped collector/otel/gateway.yaml (load_balancing on
 *   forkwatch.session.key) -> two `forkwatch serve` detectors (OTLP/gRPC, temp SQLite files).
 *
 * CPU of every process from /proc/<pid>/stat (utime + stime): the apps from `go` to their `done`
 * (spans flushed), the proxy, the Collector and the detectors from `go` until the detectors'
 * findings settled (the decisions a window after the last span included).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Finding } from '../../src/model/finding.js';
import { startDetector, type DetectorProcess } from '../../test/e2e/helpers/detector.js';
import { otelcolUnavailable, startGateway, type GatewayProcess } from '../../test/e2e/helpers/otelcol.js';
import { startProxyProcess, type ProxyProcess } from '../../test/e2e/helpers/proxy-process.js';
import type { FleetAppResult } from './fleet-mix.js';
import { scoreFleet, type FleetScore } from './score-fleet.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SALT = 'fleet-salt';

/** The fleet's size and mix, from the environment (documented in bench/RESULTS.md and docs/deployment.md). */
export interface FleetOptions {
  /** FLEET_CALLS: bulk tool calls per app. Default 1000. */
  calls: number;
  /** FLEET_CONCURRENCY: sessions in flight per app. Default 8. */
  concurrency: number;
  /** FLEET_BREAKS: seed-scenario stream cuts with a healthy resume, per app. Default calls / 100. */
  breaks: number;
  /** FLEET_FORKS: seed-scenario forks, per app. Default 3. */
  forks: number;
  /** FLEET_SEED. Default 1. */
  seed: number;
  /** FLEET_LONG_SHARE: share of bulk calls that are long (1.5-4 s, progress every 250 ms), 0..1. Default 0.1. */
  longShare?: number;
}

export function fleetOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): FleetOptions {
  const int = (name: string, dflt: number, min: number): number => {
    const v = env[name];
    if (v === undefined || v === '') return dflt;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`${name}: an integer >= ${min}, got ${JSON.stringify(v)}`);
    return n;
  };
  const calls = int('FLEET_CALLS', 1000, 1);
  const o: FleetOptions = { calls, concurrency: int('FLEET_CONCURRENCY', 8, 1), breaks: int('FLEET_BREAKS', Math.round(calls / 100), 0), forks: int('FLEET_FORKS', 3, 0), seed: int('FLEET_SEED', 1, 0) };
  const ls = env.FLEET_LONG_SHARE;
  if (ls !== undefined && ls !== '') {
    const x = Number(ls);
    if (!(x >= 0 && x <= 1)) throw new Error(`FLEET_LONG_SHARE: a number from 0 to 1, got ${JSON.stringify(ls)}`);
    o.longShare = x;
  }
  return o;
}

/** CPU seconds of a process so far (utime + stime of /proc/<pid>/stat). */
let clkTck: number | undefined;
export function cpuSeconds(pid: number): number {
  clkTck ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / clkTck;
}

interface AppProcess {
  child: ChildProcess;
  serverUrl: string;
  done: Promise<FleetAppResult>;
  output(): string;
}

async function startApp(mode: 'instrumented' | 'plain', otlpUrl: string, o: FleetOptions): Promise<AppProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env, FLEET_MODE: mode, FLEET_OTLP_URL: otlpUrl, FLEET_CALLS: String(o.calls), FLEET_CONCURRENCY: String(o.concurrency), FLEET_BREAKS: String(o.breaks), FLEET_FORKS: String(o.forks), FLEET_SEED: String(o.seed), FLEET_LONG_SHARE: String(o.longShare ?? 0.1), FORKWATCH_SESSION_SALT: SALT };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ['--conditions=forkwatch-source', '--import', 'tsx', 'bench/fleet/fleet-app.ts'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out = (out + d).slice(-20_000)));
  const line = (re: RegExp, what: string): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const m = re.exec(out);
        if (m) {
          child.stdout!.off('data', check);
          resolve(m);
        }
      };
      child.stdout!.on('data', check);
      child.once('exit', (code) => reject(new Error(`${mode} app exited (${code}) before ${what}:\n${out.slice(-4000)}`)));
      check();
    });
  const ready = await line(/^ready (\S+)$/m, 'ready');
  const done = line(/^done (.+)$/m, 'done').then((m) => JSON.parse(m[1]!) as FleetAppResult);
  done.catch(() => undefined);
  return { child, serverUrl: ready[1]!, done, output: () => out };
}

async function getText(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
  return res.text();
}

/** Every local finding of a detector, all pages. */
async function localFindings(d: DetectorProcess): Promise<Finding[]> {
  const out: Finding[] = [];
  let cursor: string | undefined;
  do {
    const body = JSON.parse(await getText(`${d.httpUrl}/api/v1/findings?limit=500&scope=local${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)) as { items: Finding[]; nextCursor?: string };
    out.push(...body.items);
    cursor = body.nextCursor;
  } while (cursor);
  return out;
}

/** Sum of a Prometheus counter's samples (every label set). */
export function sumMetric(text: string, name: string): number {
  let n = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) n += Number(m[1]);
  return n;
}

/** What `npm run bench -- fleet` measured. */
export interface FleetResult {
  options: FleetOptions;
  instrumented: FleetAppResult;
  plain: FleetAppResult;
  /** CPU seconds in the measured window, by process. */
  cpu: { instrumented: number; plain: number; proxy: number; collector: number; detectors: [number, number] };
  /** CPU seconds the same processes spend idle over the same window (their rate over 4 quiet seconds before the load). */
  idleCpu: { proxy: number; collector: number; detectors: number };
  /** Wall seconds: the apps' load, and until the findings settled. */
  wall: { load: number; total: number };
  /** Spans the detectors received (forkwatch_spans_received_total), each; spans the Collector accepted. */
  spans: { detectors: [number, number]; collectorAccepted: number };
  findings: [Finding[], Finding[]];
  score: FleetScore;
}

/** Runs the fleet once; throws when a part cannot start (no Collector: see otelcolUnavailable). */
export async function runFleet(o: FleetOptions = fleetOptionsFromEnv(), log: (line: string) => void = () => undefined): Promise<FleetResult> {
  const why = otelcolUnavailable();
  if (why) throw new Error(why);
  const stops: Array<() => Promise<unknown>> = [];
  try {
    const ds = [await startDetector(), await startDetector()] as [DetectorProcess, DetectorProcess];
    for (const d of ds) stops.push(() => d.stop());
    const gw: GatewayProcess = await startGateway({ detectors: ds.map((d) => d.otlpGrpcAddress) });
    stops.push(() => gw.stop());
    const instr = await startApp('instrumented', gw.otlpHttpUrl, o);
    const plain = await startApp('plain', '', o);
    for (const a of [instr, plain]) stops.push(async () => void a.child.kill('SIGKILL'));
    const px: ProxyProcess = await startProxyProcess({
      upstream: new URL(plain.serverUrl).origin,
      otlpEndpoint: gw.otlpHttpUrl,
      serviceName: 'fleet-proxy',
      env: { FORKWATCH_SESSION_SALT: SALT },
    });
    stops.push(() => px.stop());
    log(`# processes up: 2 detectors, the Collector, the proxy, 2 apps (${o.calls} bulk calls each, ${o.concurrency} sessions in flight, ${o.breaks} stream breaks, ${o.forks} forks)`);

    const pids = { instrumented: instr.child.pid!, plain: plain.child.pid!, proxy: px.pid, collector: gw.child.pid!, d0: ds[0].child.pid!, d1: ds[1].child.pid! };
    // Idle cost first: each process's CPU over a quiet few seconds (timers, ticks, the Collector's own loops).
    const quietMs = 4000;
    const q0 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)])) as Record<keyof typeof pids, number>;
    await new Promise((r) => setTimeout(r, quietMs));
    const idle = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, (cpuSeconds(pid) - q0[k as keyof typeof pids]) / (quietMs / 1000)])) as Record<keyof typeof pids, number>;
    const at0 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)])) as Record<keyof typeof pids, number>;
    const t0 = Date.now();
    instr.child.stdin!.write('go\n');
    plain.child.stdin!.write(`go ${new URL('/mcp', `http://127.0.0.1:${px.port}`).href}\n`);
    const appCpu: Partial<Record<'instrumented' | 'plain', number>> = {};
    const [ri, rp] = await Promise.all(
      (['instrumented', 'plain'] as const).map(async (k) => {
        const r = await (k === 'instrumented' ? instr : plain).done;
        appCpu[k] = cpuSeconds(pids[k]) - at0[k];
        return r;
      }),
    );
    const tLoad = Date.now();
    log(`# load done in ${((tLoad - t0) / 1000).toFixed(1)} s; waiting for the detectors' decisions`);
    for (const a of [instr, plain]) a.child.stdin!.write('exit\n');

    // Settled: at least the decision window (10 s default) and the proxy's export delay after the
    // load, then spans received and findings unchanged for three polls a second apart.
    let last = '';
    let stable = 0;
    const deadline = Date.now() + 180_000;
    let findings: [Finding[], Finding[]] = [[], []];
    let received: [number, number] = [0, 0];
    for (;;) {
      await new Promise((r) => setTimeout(r, 1000));
      findings = (await Promise.all(ds.map(localFindings))) as [Finding[], Finding[]];
      received = (await Promise.all(ds.map(async (d) => sumMetric(await getText(`${d.httpUrl}/metrics`), 'forkwatch_spans_received_total')))) as [number, number];
      const sig = JSON.stringify([received, findings.map((f) => f.map((x) => x.id).sort())]);
      stable = sig === last ? stable + 1 : 0;
      last = sig;
      if ((stable >= 3 && Date.now() - tLoad >= 17_000) || Date.now() > deadline) break;
    }
    const cpuEnd = (k: keyof typeof pids): number => cpuSeconds(pids[k]) - at0[k];
    const windowS = (Date.now() - t0) / 1000;
    const idleCpu: FleetResult['idleCpu'] = { proxy: idle.proxy * windowS, collector: idle.collector * windowS, detectors: idle.d0 * windowS + idle.d1 * windowS };
    const cpu: FleetResult['cpu'] = { instrumented: appCpu.instrumented!, plain: appCpu.plain!, proxy: cpuEnd('proxy'), collector: cpuEnd('collector'), detectors: [cpuEnd('d0'), cpuEnd('d1')] };
    const tEnd = Date.now();
    const collectorAccepted = sumMetric(await getText(gw.metricsUrl), 'otelcol_receiver_accepted_spans(?:_total)?');
    return {
      options: o,
      instrumented: ri!,
      plain: rp!,
      cpu,
      idleCpu,
      wall: { load: (tLoad - t0) / 1000, total: (tEnd - t0) / 1000 },
      spans: { detectors: received, collectorAccepted },
      findings,
      score: scoreFleet(ri!, findings.flat()),
    };
  } finally {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  }
}
