/**
 * The processes of `npm run bench -- sidecar`, and what the kernel says each one cost: CPU from
 * the scheduler's runtime of each thread (/proc/<pid>/task/<tid>/sched, nanoseconds) where the
 * kernel shows it, else /proc/<pid>/stat (utime + stime, every thread, in clock ticks), and
 * resident memory from /proc/<pid>/status, read from outside so that the proxy under test runs
 * exactly as deployed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** What the sink and the upstream print once listening. */
export const PORT_LINE = /^PORT (\d+)$/;

/** Linux's USER_HZ: `getconf CLK_TCK` is 100 on every kernel Node supports. */
const TICKS_PER_SECOND = 100;

export interface BenchProcess {
  name: string;
  pid: number;
  port: number;
  /**
   * CPU time since start, µs: to the nanosecond from the scheduler ({@link procRuntimeUs}) where
   * the kernel shows it, else at the tick's resolution (10 ms).
   */
  cpuUs(): number;
  /** The system (kernel) part of {@link cpuUs}. */
  sysUs(): number;
  /** Resident set, bytes. */
  rssBytes(): number;
  stop(): Promise<void>;
}

/** CPU µs of `pid` (user + system, or `system` alone: the kernel's share), all threads, from /proc/<pid>/stat. */
export function procCpuUs(pid: number, which: 'all' | 'system' = 'all'): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which may hold spaces: state is field 3, utime 14, stime 15.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (((which === 'all' ? Number(f[11]) : 0) + Number(f[12])) * 1e6) / TICKS_PER_SECOND;
}

const RUNTIME_LINE = /^se\.sum_exec_runtime\s*:\s*([\d.]+)/m;

/**
 * CPU µs of `pid`, every live thread, from the scheduler's `se.sum_exec_runtime` (ms to the ns,
 * /proc/<pid>/task/<tid>/sched; kernels built with CONFIG_SCHED_DEBUG): undefined where that is
 * not shown. A block of 600 calls uses ~170 ms of a proxy's CPU, and /proc/<pid>/stat counts in
 * 10 ms ticks: its blocks' ratios moved by a tick, ±6 %. Threads that exited are not counted
 * (Node's live as long as the process).
 */
export function procRuntimeUs(pid: number): number | undefined {
  let tids: string[];
  try {
    if (!RUNTIME_LINE.test(readFileSync(`/proc/${pid}/sched`, 'utf8'))) return undefined;
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  let total = 0;
  for (const tid of tids) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/task/${tid}/sched`, 'utf8');
    } catch {
      continue; // exited since the listing
    }
    const m = RUNTIME_LINE.exec(text);
    if (m) total += Number(m[1]) * 1000;
  }
  return total;
}

/** VmRSS of `pid`, bytes. */
export function procRssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/**
 * Spawns `node args...` (under `wrapper...` when given) and resolves once a stdout line matches
 * `ready` (its first group: the port); rejects if the process exits first or stays silent `timeoutMs`.
 */
export function startProcess(name: string, args: string[], ready: RegExp, timeoutMs = 30_000, wrapper: string[] = []): Promise<BenchProcess> {
  // `wrapper`: a command that runs node itself (valgrind ...), the process measured being that one.
  const [cmd, ...pre] = wrapper.length > 0 ? [...wrapper, process.execPath] : [process.execPath];
  const child: ChildProcess = spawn(cmd!, [...pre, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  // Its stderr is said only if it fails: a proxy's stop line is not the bench's output.
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name}: not listening after ${timeoutMs} ms`));
    }, timeoutMs);
    const onExit = (code: number | null): void => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${String(code)} before listening: ${stderr}`));
    };
    child.once('exit', onExit);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const m = ready.exec(line);
      if (!m) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      const pid = child.pid!;
      resolve({
        name,
        pid,
        port: Number(m[1]),
        cpuUs: () => procRuntimeUs(pid) ?? procCpuUs(pid),
        sysUs: () => procCpuUs(pid, 'system'),
        rssBytes: () => procRssBytes(pid),
        stop: () =>
          new Promise<void>((r) => {
            if (child.exitCode !== null || child.signalCode !== null) return r();
            child.once('exit', () => r());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

/**
 * Starts what every sidecar bench puts behind its proxies: the OTLP sink and the MCP SDK upstream
 * (sink-main.ts, upstream-main.ts), each a process of its own, pushed on `started` to be stopped.
 */
export async function startBackends(started: BenchProcess[]): Promise<{ sink: BenchProcess; upstream: BenchProcess; up: string }> {
  const here = (f: string): string => fileURLToPath(new URL(f, import.meta.url));
  const sink = await startProcess('sink', [here('./sink-main.js')], PORT_LINE);
  started.push(sink);
  const upstream = await startProcess('upstream', [here('./upstream-main.js')], PORT_LINE);
  started.push(upstream);
  return { sink, upstream, up: `http://127.0.0.1:${upstream.port}/mcp` };
}
