/**
 * `npm run bench -- sidecar-profile`: where each proxy's CPU goes as deployed, where
 * `npm run bench -- sidecar` says only how much. Each proxy (the bare `node:http` pipe, `forkwatch
 * proxy`, and `SIDECAR_COMPARE_CLI` builds) runs in a process of its own under `perf record -e
 * cpu-clock` (every thread, 4,000 samples a second of its CPU; node `--perf-basic-prof` names the
 * JIT's code), in front of the sidecar bench's upstream (a real MCP SDK server process) and sink,
 * driven by a stock SDK client with 4 calls in flight. Sampling is switched on (`perf --control`)
 * only after the warm-up, so that what is counted is a warmed-up proxy's steady state, and off
 * before the proxy stops. Prints CPU per call by category (the proxy's own JavaScript, Node's, V8's
 * builtins and runtime, Node's native code, the kernel, the other threads) and the main thread's
 * functions that cost most over the bare pipe's.
 *
 * Sampled CPU is time, on a shared machine: variants run one after the other, so compare within a
 * run, and the category split more than the totals. Needs Linux `perf` (`apt-get install
 * linux-perf`) and root or `kernel.perf_event_paranoid` <= 1.
 *
 * Environment: SIDECAR_PROFILE_NOTIFICATIONS (5), SIDECAR_PROFILE_WARMUP (3,000 calls at 5
 * notifications, then a tenth at 50, then a tenth at the counted count), SIDECAR_PROFILE_CALLS
 * (15,000), SIDECAR_PROFILE_GUARD=1 (adds `forkwatch proxy --guard`), SIDECAR_COMPARE_CLI.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { block, connect } from './sidecar.js';
import { PORT_LINE, startBackends, type BenchProcess } from './sidecar/processes.js';
import { byCategory, compilerSamples, readPerf, type PerfSamples } from './sidecar/perf-report.js';

const env = (name: string, d: number): number => Number(process.env[name] ?? d);
const N = env('SIDECAR_PROFILE_NOTIFICATIONS', 5);
const WARMUP = env('SIDECAR_PROFILE_WARMUP', 3000);
const CALLS = env('SIDECAR_PROFILE_CALLS', 15000);
const HZ = 4000;
const PROXY_LINE = /^forkwatch proxy listening url=http:\/\/127\.0\.0\.1:(\d+)/;
const fromRoot = (p: string): string => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

interface Profiled {
  name: string;
  samples: PerfSamples;
}

/** Runs `node args` under perf, warms it up, counts CALLS calls; resolves to its samples. */
async function profile(name: string, args: string[], ready: RegExp, dir: string, i: number): Promise<Profiled> {
  const ctl = join(dir, `ctl${i}`);
  const data = join(dir, `perf${i}.data`);
  if (spawnSync('mkfifo', [ctl]).status !== 0) throw new Error('mkfifo failed');
  const perf = spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', String(HZ), '-g', '-D', '-1', `--control=fifo:${ctl}`, '-o', data, '--', process.execPath, '--perf-basic-prof', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // --perf-basic-prof also writes V8's isolate-*.log where the process runs: in the temp dir, deleted after.
    cwd: dir,
  });
  let stderr = '';
  perf.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const exited = new Promise<void>((r) => perf.once('exit', () => r()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${name}: not listening under perf: ${stderr}`)), 30_000);
    perf.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      for (const line of out.split('\n')) {
        const m = ready.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      }
    });
    perf.once('exit', () => reject(new Error(`${name}: exited under perf: ${stderr}`)));
  });
  // The proxy is perf's child: its pid is the main thread's tid in the samples.
  const pid = Number(spawnSync('pgrep', ['-P', String(perf.pid)], { encoding: 'utf8' }).stdout.trim().split('\n')[0]);
  const client = await connect(port);
  try {
    await block(client, 5, WARMUP);
    await block(client, 50, Math.ceil(WARMUP / 10));
    await block(client, N, Math.ceil(WARMUP / 10));
    writeFileSync(ctl, 'enable\n');
    await block(client, N, CALLS);
    writeFileSync(ctl, 'disable\n');
  } finally {
    await client.close().catch(() => undefined);
    if (pid > 0) process.kill(pid, 'SIGTERM');
    await exited;
  }
  const samples = readPerf(data, pid);
  rmSync(`/tmp/perf-${pid}.map`, { force: true });
  return { name, samples };
}

export async function printSidecarProfile(print: (line: string) => void): Promise<void> {
  print(`\n# Sidecar as deployed, where the CPU goes: each proxy a process of its own under perf record -e cpu-clock (${HZ} Hz, every`);
  print(`# thread), in front of one real MCP SDK server process; stock SDK client, 4 calls in flight; sampled over ${CALLS} calls at ${N}`);
  print(`# notifications after ${WARMUP} warm-up calls at 5 (and ${Math.ceil(WARMUP / 10)} at 50, ${Math.ceil(WARMUP / 10)} at ${N}). µs of CPU per call, from samples.`);
  if (spawnSync('perf', ['--version']).status !== 0) {
    print('  perf is not installed here (apt-get install linux-perf): nothing measured');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-sidecar-profile-'));
  const started: BenchProcess[] = [];
  const runs: Profiled[] = [];
  try {
    const { upstream, sink, up } = await startBackends(started);
    const fw = (cli: string, extra: string[] = []): string[] => [cli, 'proxy', '--upstream', up, '--port', '0', '--otlp-endpoint', `http://127.0.0.1:${sink.port}`, ...extra];
    const variants: Array<{ name: string; args: string[]; ready: RegExp }> = [
      { name: 'bare pipe', args: [here('./sidecar/bare-main.js'), String(upstream.port)], ready: PORT_LINE },
      { name: 'forkwatch', args: fw(fromRoot('dist/cli/bin.js')), ready: PROXY_LINE },
    ];
    if (process.env.SIDECAR_PROFILE_GUARD === '1') variants.push({ name: 'forkwatch --guard', args: fw(fromRoot('dist/cli/bin.js'), ['--guard']), ready: PROXY_LINE });
    const others = (process.env.SIDECAR_COMPARE_CLI ?? '').split(',').filter((c) => c !== '');
    for (const [i, other] of others.entries()) variants.push({ name: others.length === 1 ? 'compare' : `compare ${i + 1}`, args: fw(other), ready: PROXY_LINE });
    for (const [i, v] of variants.entries()) runs.push(await profile(v.name, v.args, v.ready, dir, i));
  } finally {
    await Promise.all(started.reverse().map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
  const us = (samples: number): number => (samples * 1e6) / HZ / CALLS;
  // The proxy's own code: its dist/ (or a compared build's), the instrumentation package's; the bare pipe's, bench code.
  const own = (sym: string): boolean => /\/(dist|packages|build\/bench)\//.test(sym) && !sym.includes('node:');
  const cats = runs.map((r) => byCategory(r.samples, own));
  const names = [...new Set(cats.flatMap((c) => [...c.keys()]))].sort();
  const total = (c: Map<string, number>): number => [...c.values()].reduce((a, b) => a + b, 0);
  print(`  ${''.padEnd(38)} ${runs.map((r) => r.name.padStart(18)).join('')}`);
  for (const n of names) print(`  ${n.padEnd(38)} ${cats.map((c) => us(c.get(n) ?? 0).toFixed(1).padStart(18)).join('')}`);
  print(`  ${'of which V8\'s compiler threads'.padEnd(38)} ${runs.map((r) => us(compilerSamples(r.samples)).toFixed(1).padStart(18)).join('')}`);
  print(`  ${'total'.padEnd(38)} ${cats.map((c) => us(total(c)).toFixed(1).padStart(18)).join('')}`);
  print(`  ${'vs the bare pipe'.padEnd(38)} ${cats.map((c) => `${(total(c) / total(cats[0]!)).toFixed(3)}x`.padStart(18)).join('')}`);
  const bare = runs[0]!.samples.main;
  for (const r of runs.slice(1)) {
    print(`  ${r.name}: the main thread's functions that cost most over the bare pipe's (µs per call: this, bare)`);
    const syms = [...new Set([...r.samples.main.keys(), ...bare.keys()])];
    const over = (s: string): number => (r.samples.main.get(s) ?? 0) - (bare.get(s) ?? 0);
    for (const s of syms.sort((a, b) => over(b) - over(a)).slice(0, 15)) {
      print(`    ${us(over(s)).toFixed(2).padStart(6)}  (${us(r.samples.main.get(s) ?? 0).toFixed(2)}, ${us(bare.get(s) ?? 0).toFixed(2)})  ${s.replace(/file:\/\/\S*?\/(dist|packages)\//, '$1/').slice(0, 110)}`);
    }
  }
}
