/**
 * `npm run bench -- proxy-events`: what `forkwatch proxy` spends on each SSE event it passes, in
 * process and stage by stage: the chunk decoded and parsed (SseParser), its data described
 * (describeEvent: kind, id, method, progress token; since the exchange reads only what may answer a
 * request, mayAnswer and the answers' describeEvent), fingerprinted (payloadPrint), logged in the
 * session's event log (SessionEventLog.add) and recorded in its history ring (EventHistory.record),
 * as exchange.ts's onEvent does. Each row is the pipeline up to that stage; the cost of a stage is
 * the difference to the row above. The sidecar bench (`npm run bench -- sidecar`) measures the
 * deployed process, where these costs come with the garbage collector's share; this one tells which
 * stage to cut, at a resolution the deployed bench's noise hides.
 *
 * Input: the answers of bench/sidecar's upstream (the SDK's InMemoryEventStore ids, N progress
 * notifications and the result), one chunk per event as the proxy receives them (the SDK writes
 * each event on its own: each of the 1,042 chunks of 20 calls held one event, 2026-12-07), one
 * session. A build with sse-scan.js reads each chunk as its relay does (off the bytes when it can,
 * else as text): its parse stage then takes the id's hash and the payload's print too, which its
 * print and log stages use as taken. CPU from process.cpuUsage (the GC's helper threads
 * included), ns per event.
 *
 * Environment: PROXY_EVENTS_BASE, the `dist/` of another build (say the last commit's, copied
 * with package.json to .tmp/base/) measured in the same run, rounds interleaved: a before/after
 * in one run; PROXY_EVENTS_ROUNDS (default 5), PROXY_EVENTS_CALLS per measurement (default 4000),
 * PROXY_EVENTS_NOTIFICATIONS (default 50).
 */
import { resolve } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';

const env = (name: string, d: number): number => Number(process.env[name] ?? d);
const ROUNDS = env('PROXY_EVENTS_ROUNDS', 5);
const CALLS = env('PROXY_EVENTS_CALLS', 4000);
const N = env('PROXY_EVENTS_NOTIFICATIONS', 50);
export const PROXY_EVENT_STAGES = ['parse', '+describe', '+print', '+log', '+history'] as const;
type Stage = (typeof PROXY_EVENT_STAGES)[number];

interface Build {
  name: string;
  run(stage: number, calls: number): number;
}

/** One answer as the SDK's server sends it: N progress notifications, then the result, each with an event-store id, a chunk each. */
function answer(call: number): Buffer[] {
  const stream = `${(call * 2654435761) % 1e9}-4abc-9def-0123456789ab`;
  const id = (): string => `${stream}_${1765000000000 + call}_${Math.random().toString(36).substring(2, 10)}`;
  const out: Buffer[] = [];
  for (let i = 1; i <= N; i++) out.push(Buffer.from(`event: message\nid: ${id()}\ndata: {"method":"notifications/progress","params":{"progressToken":${call},"progress":${i},"total":${N}},"jsonrpc":"2.0"}\n\n`));
  out.push(Buffer.from(`event: message\nid: ${id()}\ndata: {"result":{"content":[{"type":"text","text":"done ${N}"}]},"jsonrpc":"2.0","id":${call}}\n\n`));
  return out;
}

async function load(name: string, dist: string): Promise<Build> {
  // Two builds' modules, this one's and another's: typed loosely on purpose.
  const mod = (p: string): Promise<any> => import(pathToFileURL(resolve(dist, p)).href);
  const [bb, info, printMod, table, hist, text] = await Promise.all([
    mod('proxy/building-blocks.js'),
    mod('proxy/event-info.js'),
    mod('proxy/payload-print.js'),
    mod('proxy/session-table.js'),
    mod('proxy/event-history.js'),
    mod('proxy/chunk-text.js'),
  ]);
  // Builds before it read every chunk as text.
  const scan = await mod('proxy/sse-scan.js').catch(() => undefined);
  const scanned: any[] = [];
  const spans = { event: (): void => undefined };
  const history = new hist.EventHistory(spans, { perSession: bb.DEFAULT_MAX_BUFFERED_EVENTS_PER_SESSION, maxEvents: bb.DEFAULT_MAX_BUFFERED_EVENTS }, false);
  const s = new table.SessionTable(10_000, 3_600_000, bb.DEFAULT_MAX_TRACKED_EVENT_IDS).create('0b6f3c2e-7d1a-4e55-9c3b-5a2f8e1d4c70', true);
  const origin = { incarnation: s.incarnation, protocolVersion: '2025-06-18' };
  const answers = Array.from({ length: 256 }, (_, i) => answer(i));
  let next = 0;
  const run = (stage: number, calls: number): number => {
    let events = 0;
    for (let c = 0; c < calls; c++) {
      const parser = new bb.SseParser(bb.DEFAULT_MAX_EVENT_CHARS);
      const decoder = new text.ChunkText();
      for (const chunk of answers[next++ & 255]!) {
        // As the relay reads a chunk (sse-relay.ts onData).
        const fast = scan !== undefined && parser.idle && decoder.clear && scan.scanEvents(chunk, bb.DEFAULT_MAX_EVENT_CHARS, scanned);
        const evs = fast ? scanned : parser.push(decoder.write(chunk));
        for (const ev of evs) {
          events++;
          if (stage < 1) continue;
          // Builds with mayAnswer read only what may answer a request; the ring reads the rest if emitted.
          const infos = info.mayAnswer === undefined || info.mayAnswer(ev.data) ? info.describeEvent(ev.data, ev.frame, ev.dataStart) : undefined;
          if (stage < 2) continue;
          const at = bb.epochNow();
          const print = fast ? ev.print : printMod.payloadPrint(ev.data);
          if (stage < 3) continue;
          // This build's log returns a flag (and is read for the rest); the earlier one an object.
          const r = fast ? s.log.addHashed(ev.id, ev.idLo, ev.idHi, print) : s.log.add(ev.id, print);
          if (stage < 4) continue;
          const flag = typeof r === 'boolean';
          // The ring keeps a copy of the id: the log's own (9ce489d's log kept one), or this build's.
          const id = fast ? ev.id : flag ? (s.log.id ?? bb.detach(ev.id)) : ev.id;
          history.record(s, s.id, id, ev.data, infos?.[0], flag ? s.log : r.event, flag ? r : r.replayed, origin, at, fast);
        }
      }
    }
    return events;
  };
  return { name, run };
}

export interface ProxyEventRow {
  build: string;
  stage: Stage;
  /** Median over rounds, ns of CPU per event. */
  nsPerEvent: number;
}

export async function benchProxyEvents(): Promise<ProxyEventRow[]> {
  const here = fileURLToPath(new URL('../../dist', import.meta.url));
  const builds = [await load('this build', here)];
  if (process.env.PROXY_EVENTS_BASE) builds.push(await load('base', resolve(process.env.PROXY_EVENTS_BASE)));
  // Warm-up: every stage of every build compiled before anything is measured.
  for (const b of builds) for (let st = 0; st < PROXY_EVENT_STAGES.length; st++) b.run(st, 1500);
  const samples = new Map<string, number[]>();
  for (let r = 0; r < ROUNDS; r++) {
    for (let st = 0; st < PROXY_EVENT_STAGES.length; st++) {
      for (let j = 0; j < builds.length; j++) {
        const b = builds[(r + j) % builds.length]!;
        const c0 = process.cpuUsage();
        const events = b.run(st, CALLS);
        const c = process.cpuUsage(c0);
        const key = `${b.name}/${st}`;
        samples.set(key, [...(samples.get(key) ?? []), ((c.user + c.system) * 1000) / events]);
      }
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return builds.flatMap((b) => PROXY_EVENT_STAGES.map((stage, st) => ({ build: b.name, stage, nsPerEvent: median(samples.get(`${b.name}/${st}`)!) })));
}

export async function printProxyEvents(print: (line: string) => void): Promise<void> {
  print(`\n# The proxy's work per SSE event, in process, stage by stage (exchange.ts onEvent): ${N} progress notifications and the`);
  print(`# result per answer (SDK event-store ids), one session; CPU ns per event, median of ${ROUNDS} interleaved rounds of ${CALLS} answers`);
  const rows = await benchProxyEvents();
  const base = rows.filter((r) => r.build === 'base');
  let prev = 0;
  for (const row of rows.filter((r) => r.build === 'this build')) {
    const b = base.find((x) => x.stage === row.stage);
    const vs = b ? ` | base ${Math.round(b.nsPerEvent).toString().padStart(5)} ns (this ÷ base ${(row.nsPerEvent / b.nsPerEvent).toFixed(2)})` : '';
    print(`  ${row.stage.padEnd(10)} ${Math.round(row.nsPerEvent).toString().padStart(5)} ns/event (stage ${Math.round(row.nsPerEvent - prev).toString().padStart(5)})${vs}`);
    prev = row.nsPerEvent;
  }
}
