/**
 * `npm run bench -- sidecar-instructions`: the sidecar's instructions per call as it is deployed,
 * where `npm run bench -- sidecar`'s CPU ratios are too noisy to tell a change (per-round ratios
 * spread 1.1-1.6x on this shared machine). Each proxy, the bare `node:http` pipe included, runs in
 * a process of its own under valgrind's callgrind, counting off; the bench (outside valgrind)
 * sends warm-up calls, switches counting on (`callgrind_control -i on`), sends a block of calls,
 * switches it off and dumps: the dump's total is the proxy process's instructions for the block,
 * every thread (the collector's and the compiler's helpers included). The upstream (a real MCP SDK
 * server, InMemoryEventStore), the stock SDK client (4 calls in flight) and the OTLP sink are not
 * counted. One variant at a time: instruction counts do not drift with the machine's load.
 *
 * Instructions are not time (a cache miss costs no instruction): this tells whether a change cut
 * work, the CPU bench what it saves as deployed. Under valgrind every proxy is ~50x slower; calls
 * stay far inside `requestSpanDelayMs` (1 s), so no request span is emitted (as in a real run).
 *
 * Environment: SIDECAR_INSTR_WARMUP (calls at 5 notifications, default 1500, and a tenth at 50),
 * SIDECAR_INSTR_CALLS_5 (default 400), SIDECAR_INSTR_CALLS_50 (default 100), SIDECAR_COMPARE_CLI
 * (other builds' bin.js, comma-separated, as in `npm run bench -- sidecar`), SIDECAR_INSTR_NODE_ARGS
 * (node flags for every proxy, the bare pipe's too, space-separated), SIDECAR_INSTR_KEEP (a directory:
 * the callgrind dumps are kept there, `v<variant>.out.<block>-<thread>`, thread 01 the main one, for
 * `callgrind_annotate`; default: deleted).
 *
 * What still moves between runs of one build (likely how the upstream's events fall into reads, two
 * events in one chunk being one write and one parse call, which depends on timing; and when the
 * collector runs). One build run twice in one run (2026-12-07): 0.4-1.3 % apart at 50
 * notifications, 6-10 % at 5, with or without `--single-threaded --predictable-gc-schedule`:
 * trust a change at 5 notifications only when it exceeds that.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { dumpTotals } from './callgrind-windows.js';
import { block, connect } from './sidecar.js';
import { PORT_LINE, startBackends, startProcess, type BenchProcess } from './sidecar/processes.js';

const run = promisify(execFile);
const env = (name: string, d: number): number => Number(process.env[name] ?? d);
const WARMUP = env('SIDECAR_INSTR_WARMUP', 1500);
const CALLS: Record<number, number> = { 5: env('SIDECAR_INSTR_CALLS_5', 400), 50: env('SIDECAR_INSTR_CALLS_50', 100) };
const NOTIFICATIONS = [5, 50] as const;
const PROXY_LINE = /^forkwatch proxy listening url=http:\/\/127\.0\.0\.1:(\d+)/;
const fromRoot = (p: string): string => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

export interface SidecarInstructionRow {
  variant: string;
  notifications: number;
  /** Instructions of the proxy's process per call (all threads). */
  perCall: number;
  /** This over the bare pipe's. */
  ratio: number;
  /**
   * The main thread's alone: without V8's compiler threads, whose work in a window moved 1.5-3x
   * between runs of one build (2026-12-07, `SIDECAR_INSTR_KEEP`), the steadier figure for a change.
   */
  mainPerCall: number;
  mainRatio: number;
  /**
   * Spans about calls and events the variant exported over its whole run (its session's creation,
   * end and `initialize` aside): 0 in a clean run. More means calls were slowed past `requestSpanDelayMs` (a
   * loaded machine) and its counts include span work a real run would not do.
   */
  spans: number;
}

/** Runs each variant under callgrind in turn; resolves to instructions per call by notification count. */
export async function benchSidecarInstructions(): Promise<SidecarInstructionRow[]> {
  const keep = process.env.SIDECAR_INSTR_KEEP;
  if (keep !== undefined) mkdirSync(keep, { recursive: true });
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'forkwatch-sidecar-instr-'));
  const started: BenchProcess[] = [];
  try {
    const { sink, upstream, up } = await startBackends(started);
    const nodeArgs = (process.env.SIDECAR_INSTR_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
    const fw = (cli: string, extra: string[] = []): string[] => [...nodeArgs, cli, 'proxy', '--upstream', up, '--port', '0', '--otlp-endpoint', `http://127.0.0.1:${sink.port}`, ...extra];
    const variants: Array<{ name: string; args: string[]; ready: RegExp }> = [
      { name: 'bare pipe', args: [...nodeArgs, here('./sidecar/bare-main.js'), String(upstream.port)], ready: PORT_LINE },
      { name: 'forkwatch', args: fw(fromRoot('dist/cli/bin.js')), ready: PROXY_LINE },
      { name: 'forkwatch --guard', args: fw(fromRoot('dist/cli/bin.js'), ['--guard']), ready: PROXY_LINE },
    ];
    const others = (process.env.SIDECAR_COMPARE_CLI ?? '').split(',').filter((c) => c !== '');
    for (const [i, other] of others.entries()) variants.push({ name: others.length === 1 ? 'compare' : `compare ${i + 1}`, args: fw(other), ready: PROXY_LINE });

    const perCall = new Map<string, number>();
    const mainPerCall = new Map<string, number>();
    const spans = new Map<string, number>();
    const sinkSpans = async (): Promise<number> => ((await (await fetch(`http://127.0.0.1:${sink.port}/counts`)).json()) as { calls: number }).calls;
    for (const [vi, v] of variants.entries()) {
      const spansBefore = await sinkSpans();
      const out = join(dir, `v${vi}.out`);
      // --smc-check: V8 writes and rewrites its code; valgrind must see every change.
      const wrapper = ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', '--separate-threads=yes', `--callgrind-out-file=${out}`];
      const proxy = await startProcess(v.name, v.args, v.ready, 180_000, wrapper);
      let client: Client | undefined;
      try {
        client = await connect(proxy.port);
        await block(client, 5, WARMUP);
        await block(client, 50, Math.ceil(WARMUP / 10));
        for (const [k, n] of NOTIFICATIONS.entries()) {
          await run('callgrind_control', ['-i', 'on', String(proxy.pid)]);
          await block(client, n, CALLS[n]!);
          await run('callgrind_control', ['-i', 'off', String(proxy.pid)]);
          await run('callgrind_control', ['-d', String(proxy.pid)]);
          // One dump per thread: `-01` is the main thread, the others V8's and libuv's helpers.
          const files = readdirSync(dir).filter((f) => f.startsWith(`v${vi}.out.${k + 1}-`)).sort();
          const totals = dumpTotals(files.map((f) => readFileSync(join(dir, f), 'utf8')), out);
          perCall.set(`${v.name}/${n}`, totals.reduce((a, b) => a + b, 0) / CALLS[n]!);
          mainPerCall.set(`${v.name}/${n}`, totals[0]! / CALLS[n]!);
        }
      } finally {
        await client?.close().catch(() => undefined);
        await proxy.stop();
      }
      spans.set(v.name, (await sinkSpans()) - spansBefore);
    }
    return NOTIFICATIONS.flatMap((n) =>
      variants.map((v) => {
        const mine = perCall.get(`${v.name}/${n}`)!;
        const main = mainPerCall.get(`${v.name}/${n}`)!;
        return { variant: v.name, notifications: n, perCall: mine, ratio: mine / perCall.get(`bare pipe/${n}`)!, mainPerCall: main, mainRatio: main / mainPerCall.get(`bare pipe/${n}`)!, spans: spans.get(v.name) ?? 0 };
      }),
    );
  } finally {
    await Promise.all(started.reverse().map((p) => p.stop()));
    if (keep === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the bench and prints instructions per call and the ratios to the bare pipe. */
export async function printSidecarInstructions(print: (line: string) => void): Promise<void> {
  print(`\n# Sidecar as deployed, instructions per call: each proxy (the bare node:http pipe too) a process of its own under`);
  print(`# valgrind callgrind (all threads), in front of one real MCP SDK server process; stock SDK client, 4 calls in flight;`);
  print(`# counted over ${CALLS[5]} calls at 5 notifications and ${CALLS[50]} at 50, after ${WARMUP} (and ${Math.ceil(WARMUP / 10)}) warm-up calls each.`);
  if (process.env.SIDECAR_INSTR_NODE_ARGS) print(`# node flags for every proxy: ${process.env.SIDECAR_INSTR_NODE_ARGS}`);
  const rows = await benchSidecarInstructions();
  for (const r of rows) {
    const isBare = r.variant === 'bare pipe';
    const ratio = (x: number): string => (isBare ? '           ' : ` ${x.toFixed(2)}x bare`);
    print(
      `  ${r.variant.padEnd(18)} ${String(r.notifications).padStart(2)} notif. | ${(r.perCall / 1e6).toFixed(3).padStart(7)} M instructions/call${ratio(r.ratio)} | main thread ${(r.mainPerCall / 1e6).toFixed(3).padStart(7)} M${ratio(r.mainRatio)}`,
    );
  }
  const spanned = [...new Set(rows.filter((r) => r.spans > 0).map((r) => `${r.variant} ${r.spans}`))];
  // A span means a call outlived requestSpanDelayMs under valgrind: that variant's counts carry span work.
  if (spanned.length > 0) print(`  NOT COMPARABLE: spans about calls exported (calls slowed past requestSpanDelayMs; rerun on a quieter machine): ${spanned.join(', ')}`);
  else print('  spans about calls exported: none (every call inside requestSpanDelayMs, as in a real run)');
}
