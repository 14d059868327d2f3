/**
 * `npm run bench -- sidecar`: what `forkwatch proxy` costs as it is deployed, against a bare
 * `node:http` pipe proxy, each in a process of its own in front of one real MCP SDK server process
 * (its tool sends N progress notifications per call, InMemoryEventStore), stock SDK clients with
 * 4 calls in flight, spans exported over OTLP/HTTP protobuf to a sink process. The proxies'
 * own CPU is read from /proc (bench/sidecar/processes.ts); the client's, server's and sink's are
 * not counted. Variants run block by block in a rotating order, round after round, so that every
 * one samples the same moments of a shared machine; the ratios are what to compare.
 */
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { latencyVerdict, quantile, quantileDifferences, type QuantileDifference } from './sidecar/latency-interval.js';
import { PORT_LINE, startBackends, startProcess, type BenchProcess } from './sidecar/processes.js';
import { wireCall, wireSession, type WireSession } from './sidecar/wire-call.js';
import { pairedTransits, tryCapture, type CallKeys } from './sidecar/wire-capture.js';

const IN_FLIGHT = 4;
const NOTIFICATIONS = [5, 50] as const;
const env = (name: string, d: number): number => Number(process.env[name] ?? d);
/** Calls per measured block, per notification count (SIDECAR_CALLS_5, SIDECAR_CALLS_50). */
const blockCalls = (n: number): number => env(`SIDECAR_CALLS_${n}`, n === 5 ? 600 : 150);
const ROUNDS = env('SIDECAR_ROUNDS', 5);
/**
 * Calls per variant at 5 notifications before anything is measured, and a tenth of it at 50: V8
 * compiles a proxy's hot code for a while. Under this load with no latency phase between, a
 * `perf` profile of each proxy after 1,500 (and 150) found V8's compiler threads still busy over
 * the next 3,000 calls (forkwatch 21.8 µs a call, the bare pipe 9.6); after 3,000 (and 300), both
 * at ~7.5 µs a call over the next 15,000 (bench/RESULTS.md, stop 44): a long-running sidecar pays
 * the second.
 */
const WARMUP = env('SIDECAR_WARMUP', 3000);
/**
 * Calls per variant and notification count in the latency phase (concurrency 1, interleaved): a
 * p99 needs 1,000 or more for an interval (latency-interval.ts, MIN_BEYOND).
 */
const LATENCY_CALLS = env('SIDECAR_LATENCY_CALLS', 2000);

/** The goals of issue 28. */
export const SIDECAR_GOALS = { cpuRatio: 1.2, idleRssMiB: 64, addedP99Ms: 0.5 } as const;

const fromRoot = (p: string): string => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));
const PROXY_LINE = /^forkwatch proxy listening url=http:\/\/127\.0\.0\.1:(\d+)/;

/**
 * Node's fetch without the request's AbortSignal, for every variant alike: the SDK hands each
 * request its transport's one signal, and undici keeps a listener on it per request until a major
 * GC (bench/instrumentation.ts), a client cost that grows through a run.
 */
const withoutSignal = (input: string | URL | Request, init?: RequestInit): Promise<Response> => fetch(input, init?.signal ? { ...init, signal: undefined } : init);
const noop = (): void => undefined;

interface Variant {
  name: string;
  proxy: BenchProcess;
  client: Client;
  /** The client's session, called on the wire in the latency phase. */
  wire: WireSession;
}

export async function connect(port: number): Promise<Client> {
  const client = new Client({ name: 'sidecar-bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { fetch: withoutSignal }));
  return client;
}

async function toolCall(client: Client, n: number): Promise<void> {
  const r = await client.callTool({ name: 'progress', arguments: { n } }, undefined, { onprogress: noop });
  if (r.isError) throw new Error(`tool call failed: ${JSON.stringify(r.content)}`);
}

export async function block(client: Client, n: number, calls: number): Promise<void> {
  let left = calls;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (left-- > 0) await toolCall(client, n);
    }),
  );
}

export interface SidecarRow {
  variant: string;
  notifications: number;
  /** Proxy process CPU per call, µs: total over all rounds / calls. */
  cpuUsPerCall: number;
  /** Its system (kernel) part: the sockets' work, which a pipe proxy shares with every other. */
  sysUsPerCall: number;
  /** This over the bare pipe's, from the totals; and the lowest and highest of the per-round ratios. */
  ratio: number;
  roundRatios: number[];
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** A message's transit from the server to the client, through this variant. */
  messageP99Ms: number;
  /** Over the bare pipe's (paired), with 95 % bootstrap intervals; undefined for the bare pipe. */
  added: Added | undefined;
  /** The proxy's own transit (packet in to packet out, wire-capture.ts), ms; undefined without a capture. */
  through: { request: [number, number]; message: [number, number] } | undefined;
  /** That over the bare pipe's: p50 and p99 with their intervals; undefined for the bare pipe or without a capture. */
  throughAdded: { request: [QuantileDifference, QuantileDifference]; message: [QuantileDifference, QuantileDifference] } | undefined;
}

/** The latency phase's samples of one variant, ms: per call, per request, per message (call by call, in order). */
interface Timings {
  call: number[];
  request: number[];
  message: number[];
}

/** p50 and p99 added over the bare pipe: the whole call, the request's way in, each message's way out. */
export interface Added {
  call: [QuantileDifference, QuantileDifference];
  request: [QuantileDifference, QuantileDifference];
  message: [QuantileDifference, QuantileDifference];
}

/** Bootstrap draws for n samples: 2,000 for a few thousand, down to 300 for the 150 k messages of the 50-notification phase (each draw sorts n). */
const resamplesFor = (n: number): number => Math.max(300, Math.min(2000, Math.floor(3e6 / n)));

export interface SidecarResult {
  rows: SidecarRow[];
  rssAfterStartMiB: Record<string, number>;
  rssAfterRunMiB: Record<string, number>;
  spansPerCall: number;
  exportBytesPerCall: number;
  loadAtStart: number[];
  /** The packet capture of the latency phase: taken (tcpdump here), packets the kernel dropped, keys seen on one leg only, calls paired. */
  capture: { taken: boolean; reason: string; dropped: number; unmatched: number; paired: { notifications: number; calls: number; leftOut: number }[] };
}

export async function benchSidecar(): Promise<SidecarResult> {
  const started: BenchProcess[] = [];
  const clients: Client[] = [];
  const agents: { destroy(): void }[] = [];
  const loadAtStart = loadavg();
  try {
    const { sink, upstream, up } = await startBackends(started);
    const cli = fromRoot('dist/cli/bin.js');
    // SIDECAR_PROFILE_DIR: every proxy, the bare pipe too, writes a V8 CPU profile there (node --cpu-prof).
    const prof = process.env.SIDECAR_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SIDECAR_PROFILE_DIR}`] : [];
    const fwArgs = [...prof, cli, 'proxy', '--upstream', up, '--port', '0', '--otlp-endpoint', `http://127.0.0.1:${sink.port}`];
    const proxies = [
      await startProcess('bare pipe', [...prof, here('./sidecar/bare-main.js'), String(upstream.port)], PORT_LINE),
      await startProcess('forkwatch', fwArgs, PROXY_LINE),
      await startProcess('forkwatch --guard', [...fwArgs, '--guard'], PROXY_LINE),
    ];
    // SIDECAR_COMPARE_CLI: other builds' bin.js (say, the last release's dist/cli/bin.js; several
    // comma-separated), and/or SIDECAR_COMPARE_NODE_ARGS: node flags (space-separated), each run as
    // one more variant without --guard: a before/after in one run.
    const others = (process.env.SIDECAR_COMPARE_CLI ?? '').split(',').filter((c) => c !== '');
    const otherArgs = process.env.SIDECAR_COMPARE_NODE_ARGS?.split(' ').filter((a) => a !== '') ?? [];
    if (others.length === 0 && otherArgs.length > 0) others.push(cli);
    for (const [i, other] of others.entries()) {
      proxies.push(await startProcess(others.length === 1 ? 'compare' : `compare ${i + 1}`, [...prof, ...otherArgs, other, ...fwArgs.slice(prof.length + 1)], PROXY_LINE));
    }
    started.push(...proxies);
    // Idle: listening, nothing served yet, its start-up garbage given a moment to be collected.
    await new Promise((r) => setTimeout(r, 2000));
    const rssAfterStartMiB = Object.fromEntries(proxies.map((p) => [p.name, p.rssBytes() / 2 ** 20]));

    const variants: Variant[] = [];
    for (const proxy of proxies) {
      const client = await connect(proxy.port);
      clients.push(client);
      const wire = wireSession(client, proxy.port);
      agents.push(wire.agent);
      variants.push({ name: proxy.name, proxy, client, wire });
    }
    for (const v of variants) {
      await block(v.client, 5, WARMUP);
      await block(v.client, 50, Math.ceil(WARMUP / 10));
    }

    // Latency: one call at a time, the variants interleaved call by call in a rotating order, sent
    // and read on the wire in each client's session (bench/sidecar/wire-call.ts).
    const latency = new Map<string, Timings>();
    // What each proxy itself adds, from the packets in and out (wire-capture.ts), when tcpdump can run.
    const tried = await tryCapture(upstream.port, proxies.map((p) => p.port));
    const capture = 'capture' in tried ? tried.capture : undefined;
    const keys = new Map<string, CallKeys[]>();
    for (const n of NOTIFICATIONS) {
      for (let i = 0; i < LATENCY_CALLS; i++) {
        for (let j = 0; j < variants.length; j++) {
          const v = variants[(i + j) % variants.length]!;
          const t = await wireCall(v.wire, n);
          const key = `${v.name}/${n}`;
          const xs = latency.get(key) ?? { call: [], request: [], message: [] };
          xs.call.push(t.callMs);
          xs.request.push(t.requestMs);
          xs.message.push(...t.messageMs);
          latency.set(key, xs);
          const ks = keys.get(key);
          if (ks === undefined) keys.set(key, [t]);
          else ks.push(t);
        }
      }
    }
    const captured = capture === undefined ? undefined : await capture.stop();

    // CPU: blocks of IN_FLIGHT concurrent calls, one variant at a time, rotating.
    const cpu = new Map<string, number[]>();
    const sys = new Map<string, number[]>();
    const sink0 = (await (await fetch(`http://127.0.0.1:${sink.port}/counts`)).json()) as { spans: number; bytes: number };
    let fwCalls = 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (const n of NOTIFICATIONS) {
        for (let j = 0; j < variants.length; j++) {
          const v = variants[(r + j) % variants.length]!;
          const calls = blockCalls(n);
          const c0 = v.proxy.cpuUs();
          const s0 = v.proxy.sysUs();
          await block(v.client, n, calls);
          const used = v.proxy.cpuUs() - c0;
          const key = `${v.name}/${n}`;
          cpu.set(key, [...(cpu.get(key) ?? []), used / calls]);
          sys.set(key, [...(sys.get(key) ?? []), (v.proxy.sysUs() - s0) / calls]);
          if (v.name !== 'bare pipe') fwCalls += calls;
        }
      }
    }
    // The exporters' last batch (200 ms schedule) lands before the sink is read.
    await new Promise((r) => setTimeout(r, 1500));
    const sink1 = (await (await fetch(`http://127.0.0.1:${sink.port}/counts`)).json()) as { spans: number; bytes: number };
    const rssAfterRunMiB = Object.fromEntries(proxies.map((p) => [p.name, p.rssBytes() / 2 ** 20]));

    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
    const rows: SidecarRow[] = [];
    const captureInfo: SidecarResult['capture']['paired'] = [];
    for (const n of NOTIFICATIONS) {
      const bare = cpu.get(`bare pipe/${n}`)!;
      const bareLat = latency.get(`bare pipe/${n}`)!;
      // Over the bare pipe, moment by moment: call i (the messages of call i) of each variant; a
      // call's messages are drawn together (block): they share its moment.
      const over = (base: number[], mine: number[], messages: boolean): [QuantileDifference, QuantileDifference] => {
        const d = quantileDifferences(base, mine, [0.5, 0.99], { resamples: resamplesFor(mine.length), block: messages ? n + 1 : 1 });
        return [d[0]!, d[1]!];
      };
      const added = (lat: Timings): Added => ({
        call: over(bareLat.call, lat.call, false),
        request: over(bareLat.request, lat.request, false),
        message: over(bareLat.message, lat.message, true),
      });
      const paired = captured && pairedTransits(new Map(variants.map((v) => [v.name, keys.get(`${v.name}/${n}`)!])), captured.transits);
      if (paired) captureInfo.push({ notifications: n, calls: LATENCY_CALLS - paired.leftOut, leftOut: paired.leftOut });
      const bareThrough = paired && paired.byVariant.get('bare pipe')!;
      const throughAdded = (t: { request: number[]; message: number[] }): NonNullable<SidecarRow['throughAdded']> => ({
        request: over(bareThrough!.request, t.request, false),
        message: over(bareThrough!.message, t.message, true),
      });
      for (const v of variants) {
        const mine = cpu.get(`${v.name}/${n}`)!;
        const lat = latency.get(`${v.name}/${n}`)!;
        const t = paired ? paired.byVariant.get(v.name)! : undefined;
        const usable = t !== undefined && t.request.length > 0;
        rows.push({
          variant: v.name,
          notifications: n,
          cpuUsPerCall: mean(mine),
          sysUsPerCall: mean(sys.get(`${v.name}/${n}`)!),
          ratio: mean(mine) / mean(bare),
          roundRatios: mine.map((x, i) => x / bare[i]!),
          latencyP50Ms: quantile(lat.call, 0.5),
          latencyP99Ms: quantile(lat.call, 0.99),
          messageP99Ms: quantile(lat.message, 0.99),
          added: v.name === 'bare pipe' ? undefined : added(lat),
          through: usable ? { request: [quantile(t.request, 0.5), quantile(t.request, 0.99)], message: [quantile(t.message, 0.5), quantile(t.message, 0.99)] } : undefined,
          throughAdded: usable && v.name !== 'bare pipe' ? throughAdded(t) : undefined,
        });
      }
    }
    return {
      rows,
      rssAfterStartMiB,
      rssAfterRunMiB,
      spansPerCall: (sink1.spans - sink0.spans) / fwCalls,
      exportBytesPerCall: (sink1.bytes - sink0.bytes) / fwCalls,
      capture:
        captured === undefined
          ? { taken: false, reason: 'reason' in tried ? tried.reason : '', dropped: 0, unmatched: 0, paired: [] }
          : { taken: true, reason: '', dropped: captured.dropped, unmatched: captured.unmatched, paired: captureInfo },
      loadAtStart,
    };
  } finally {
    for (const a of agents) a.destroy();
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all(started.reverse().map((p) => p.stop()));
  }
}

/** Runs the bench and prints its table and the goals met or not (`npm run bench -- sidecar`). */
export async function printSidecar(print: (line: string) => void): Promise<void> {
  print(`\n# Sidecar as deployed: bare node:http pipe proxy vs 'node dist/cli/bin.js proxy' (spans over OTLP/HTTP protobuf to a sink`);
  print(`# process), each proxy a process of its own, in front of one real MCP SDK server process (InMemoryEventStore); stock SDK`);
  print(`# clients, ${IN_FLIGHT} calls in flight; proxy CPU from its threads' scheduler runtime (ns), ${ROUNDS} rounds of blocks of`);
  print(`# ${blockCalls(5)} calls (5 notifications) and ${blockCalls(50)} (50), the variants rotating, after ${WARMUP} warm-up calls each.`);
  print(`# Latency: one call at a time, the variants interleaved call by call, ${LATENCY_CALLS} calls each; added = over the bare pipe;`);
  print(`# sent and read on the wire (bench/sidecar/wire-call.ts: a message arrives when its chunk comes off the socket); the server reads`);
  print(`# each request's transit and stamps each message it sends; where tcpdump runs, the packets on the loopback give each proxy's`);
  print(`# own transit, packet in to packet out (bench/sidecar/wire-capture.ts): the p99 goal is judged on those (else end to end).`);
  const r = await benchSidecar();
  print(`# ${cpus().length} CPUs, load average at start ${r.loadAtStart.map((x) => x.toFixed(2)).join(' ')} (the p99 goal is for an idle machine)`);
  const fails: string[] = [];
  const unresolved: string[] = [];
  const ms = (d: QuantileDifference): string => `${d.diff.toFixed(2)} [${d.lo.toFixed(2)}, ${d.hi.toFixed(2)}]`;
  for (const row of r.rows) {
    const isBare = row.variant === 'bare pipe';
    const rr = row.roundRatios;
    print(
      `  ${row.variant.padEnd(18)} ${String(row.notifications).padStart(2)} notif. | ${Math.round(row.cpuUsPerCall).toString().padStart(5)} µs CPU/call (sys ${Math.round(row.sysUsPerCall).toString().padStart(4)})` +
        (isBare ? ''.padEnd(38) : ` ${row.ratio.toFixed(2)}x bare [rounds ${Math.min(...rr).toFixed(2)}-${Math.max(...rr).toFixed(2)}]`) +
        ` | call p50 ${row.latencyP50Ms.toFixed(2)} p99 ${row.latencyP99Ms.toFixed(2)} ms, message p99 ${row.messageP99Ms.toFixed(2)} ms`,
    );
    const th = row.through;
    if (th !== undefined) {
      print(`  ${''.padEnd(27)} | through it (packet in to packet out): request p50 ${th.request[0].toFixed(3)} p99 ${th.request[1].toFixed(3)} ms; message p50 ${th.message[0].toFixed(3)} p99 ${th.message[1].toFixed(3)} ms`);
    }
    if (isBare) continue;
    const a = row.added!;
    const ta = row.throughAdded;
    // The goal is judged on what the proxy itself adds, packet in to packet out, when captured;
    // else on the transits end to end (the request on its way in, each message on its way out).
    const judged: [string, QuantileDifference][] =
      ta !== undefined
        ? [
            ['request (packets)', ta.request[1]],
            ['message (packets)', ta.message[1]],
          ]
        : [
            ['request', a.request[1]],
            ['message', a.message[1]],
          ];
    const verdicts = judged.map(([, d]) => latencyVerdict(d, SIDECAR_GOALS.addedP99Ms));
    const verdict = `: p99 ${verdicts.includes('not met') ? 'not met' : verdicts.includes('not resolved') ? 'not resolved' : 'met'}`;
    if (ta !== undefined) {
      print(`  ${''.padEnd(27)} | added through it, ms [95 % interval]: request p50 ${ms(ta.request[0])} p99 ${ms(ta.request[1])}; message p50 ${ms(ta.message[0])} p99 ${ms(ta.message[1])}${verdict}`);
    }
    print(
      `  ${''.padEnd(27)} | added end to end, ms [95 % interval]: request p50 ${ms(a.request[0])} p99 ${ms(a.request[1])}; message p50 ${ms(a.message[0])} p99 ${ms(a.message[1])}${ta === undefined ? verdict : ''}`,
    );
    print(`  ${''.padEnd(27)} | (the whole call: p50 ${ms(a.call[0])} p99 ${ms(a.call[1])})`);
    if (row.ratio > SIDECAR_GOALS.cpuRatio) fails.push(`${row.variant} at ${row.notifications}: CPU ${row.ratio.toFixed(2)}x > ${SIDECAR_GOALS.cpuRatio}x`);
    judged.forEach(([what, d], i) => {
      const said = `${row.variant} at ${row.notifications}: ${what} p99 added ${ms(d)} ms`;
      if (verdicts[i] === 'not met') fails.push(`${said} > ${SIDECAR_GOALS.addedP99Ms} ms`);
      else if (verdicts[i] === 'not resolved') unresolved.push(`${said} holds ${SIDECAR_GOALS.addedP99Ms} ms`);
    });
  }
  const mib = (m: Record<string, number>): string => Object.entries(m).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ');
  print(`  RSS MiB after start (idle): ${mib(r.rssAfterStartMiB)}`);
  print(`  RSS MiB after the run:      ${mib(r.rssAfterRunMiB)}`);
  for (const [k, v] of Object.entries(r.rssAfterStartMiB)) if (k !== 'bare pipe' && v > SIDECAR_GOALS.idleRssMiB) fails.push(`${k}: idle RSS ${v.toFixed(1)} MiB > ${SIDECAR_GOALS.idleRssMiB} MiB`);
  const c = r.capture;
  print(
    c.taken
      ? `  capture (tcpdump on lo): ${c.dropped} packets dropped, ${c.unmatched} stamps seen on one side only; calls paired: ${c.paired.map((p) => `${p.calls} at ${p.notifications} (${p.leftOut} left out)`).join(', ')}`
      : `  capture: not taken (${c.reason}): the p99 goal is judged end to end`,
  );
  print(`  exported per forkwatch call: ${r.spansPerCall.toFixed(3)} spans, ${Math.round(r.exportBytesPerCall)} bytes of OTLP`);
  const verdict = fails.length > 0 ? `FAIL (${fails.join('; ')})` : unresolved.length > 0 ? 'NOT RESOLVED' : 'PASS';
  print(`  goals: CPU/call <= ${SIDECAR_GOALS.cpuRatio}x bare, idle RSS <= ${SIDECAR_GOALS.idleRssMiB} MiB, p99 added <= ${SIDECAR_GOALS.addedP99Ms} ms: ${verdict}`);
  // More calls narrow an interval (SIDECAR_LATENCY_CALLS); a loaded machine widens it.
  if (unresolved.length > 0) print(`  not resolved (the interval holds the bound): ${unresolved.join('; ')}`);
}
