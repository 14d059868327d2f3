/**
 * Scaling past one machine, with real processes only: instrumented MCP apps (`forkwatch demo`,
 * every scenario in a loop) -> a real OpenTelemetry Collector running the shipped
 * collector/otel/gateway.yaml (load_balancing on forkwatch.session.key, static resolver) -> two
 * `forkwatch serve` replicas over OTLP/gRPC. The same spans also go to one reference detector.
 * Checks: each session lives on exactly one replica; the replicas' findings together equal the
 * reference's; a replica killed mid-run and restarted on the same ports and database loses no
 * finding it had acknowledged, and the gateway's retries bring it the spans it missed; the
 * restarted replica, started with --peers, answers for both.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Finding } from '../../src/model/finding.js';
import { CLI, startDetector, waitFor, type DetectorProcess } from './helpers/detector.js';
import { otelcolBinary, otelcolUnavailable, startGateway, type GatewayProcess } from './helpers/otelcol.js';
import { startOtlpTee, type OtlpTee } from './helpers/otlp-tee.js';
import { reservePort } from './helpers/reserve-port.js';

const SKIP = otelcolUnavailable();
const TOKEN = 'e2e-fleet-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };
// Long enough that spans the gateway retries into a restarted replica still fall inside the
// window of their session, as they do on the reference that never went down.
const WINDOW_MS = 8000;
/** collector/otel/gateway.yaml's retry_on_failure.max_elapsed_time (120 s), and a margin. */
const GATEWAY_RETRY_BOUND_MS = 130_000;
const DETECTOR_ARGS = ['--decision-window-ms', String(WINDOW_MS), '--tick-interval-ms', '100', '--auth-token', TOKEN];

const cleanup: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

const demoOutput = new Map<ChildProcess, string>();

function demo(endpoint: string): ChildProcess {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  for (const k of Object.keys(env)) if (k.startsWith('FORKWATCH_') || k.startsWith('OTEL_')) delete env[k];
  const child = spawn(process.execPath, [CLI, 'demo', '--otlp-endpoint', endpoint, '--scenario', 'all', '--loop', '--interval-ms', '200'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  demoOutput.set(child, '');
  const keep = (d: string): void => void demoOutput.set(child, (demoOutput.get(child)! + d).slice(-3000));
  child.stdout!.setEncoding('utf8').on('data', keep);
  child.stderr!.setEncoding('utf8').on('data', keep);
  cleanup.push(async () => child.kill('SIGKILL'));
  return child;
}

async function getJson(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers: AUTH, signal: AbortSignal.timeout(15_000) });
  return { status: res.status, body: await res.json() };
}

async function localFindings(d: DetectorProcess): Promise<Finding[]> {
  const r = await getJson(`${d.httpUrl}/api/v1/findings?limit=1000&scope=local`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.items as Finding[];
}

const ids = (fs: Finding[]): string[] => fs.map((f) => `${f.kind}:${f.id}`).sort();

/** Waits until every detector's findings have not changed for three polls, a window apart at least. */
async function settle(detectors: DetectorProcess[]): Promise<void> {
  await new Promise((r) => setTimeout(r, WINDOW_MS + 1000));
  let last = '';
  let stable = 0;
  await waitFor(
    async () => {
      const now = JSON.stringify(await Promise.all(detectors.map(async (d) => ids(await localFindings(d)))));
      stable = now === last ? stable + 1 : 0;
      last = now;
      return stable >= 3;
    },
    90_000,
    1000,
  );
}

test('gateway -> 2 detector replicas over OTLP/gRPC: sessions stay whole, findings match one detector, a killed replica loses nothing', { skip: SKIP, timeout: 420_000 }, async (t) => {
  const a = await startDetector({ args: DETECTOR_ARGS });
  // B comes back on the same ports after its kill -9: reserved ones, which no other socket takes meanwhile.
  const [bOtlp, bGrpc, bHttp] = [await reservePort(), await reservePort(), await reservePort()];
  const bPorts = ['--otlp-port', String(bOtlp), '--otlp-grpc-port', String(bGrpc), '--http-port', String(bHttp)];
  const b0 = await startDetector({ args: [...DETECTOR_ARGS, ...bPorts] });
  const ref = await startDetector({ args: DETECTOR_ARGS });
  for (const d of [a, b0, ref]) cleanup.push(() => d.kill());
  const gateway: GatewayProcess = await startGateway({ detectors: [a.otlpGrpcAddress, b0.otlpGrpcAddress], authToken: TOKEN });
  cleanup.push(() => gateway.stop());
  const tee: OtlpTee = await startOtlpTee(gateway.otlpHttpUrl, ref.otlpUrl, AUTH);
  cleanup.push(() => tee.close());

  const demos = [demo(tee.url), demo(tee.url)];
  const progress = (stage: string): (() => string) => () => `${stage}: ${tee.sessionKeys.size} sessions, tee ${JSON.stringify(tee.counts)}\ngateway:\n${gateway.output().slice(-2000)}\n${demos.map((d) => `demo (exit ${d.exitCode ?? d.signalCode}):\n${demoOutput.get(d)}`).join('\n')}`;
  await waitFor(() => tee.sessionKeys.size >= 10, 180_000, 250, progress('before the kill'));

  // Mid-run, once B has acknowledged findings: note them, then kill -9 while the apps keep sending.
  const acked = await waitFor(async () => {
    const fs = await localFindings(b0);
    return fs.length > 0 && fs;
  }, 120_000, 500, progress('waiting for findings on B'));
  await b0.kill();
  const keysAtKill = tee.sessionKeys.size;
  await new Promise((r) => setTimeout(r, 2000));
  const b = await startDetector({ dbPath: b0.dbPath, args: [...DETECTOR_ARGS, ...bPorts, '--peers', a.httpUrl] });
  cleanup.push(() => b.kill());
  assert.equal(b.otlpGrpcAddress, b0.otlpGrpcAddress, 'restarted on the same gRPC port');
  await waitFor(() => tee.sessionKeys.size >= keysAtKill + 10, 180_000, 250, progress('after the restart'));
  for (const d of demos) d.kill('SIGKILL');
  await waitFor(() => demos.every((d) => d.exitCode !== null || d.signalCode !== null), 10_000);

  await settle([a, b, ref]);
  assert.ok(tee.counts.ok > 0 && tee.counts.spans > 0, 'spans went through the gateway');

  // Nothing B acknowledged before the kill is gone.
  const bAfter = new Set((await localFindings(b)).map((f) => f.id));
  assert.deepEqual(acked.filter((f) => !bAfter.has(f.id)).map((f) => f.id), []);

  // The replicas together found exactly what one detector fed the same spans found.
  // Batches the gateway still retries (B was down) may land after the findings looked stable:
  // wait for agreement as long as the gateway's retry bound, then show what differs, by session.
  let fa: Finding[] = [];
  let fb: Finding[] = [];
  let fref: Finding[] = [];
  await waitFor(async () => {
    [fa, fb, fref] = await Promise.all([localFindings(a), localFindings(b), localFindings(ref)]);
    return ids([...fa, ...fb]).join() === ids(fref).join();
  }, GATEWAY_RETRY_BOUND_MS, 2000).catch(() => {
    const show = (f: Finding): string => `${f.kind} session ${f.sessionKey.slice(0, 12)} ${f.summary.slice(0, 160)}`;
    const mine = new Set(ids([...fa, ...fb]));
    const theirs = new Set(ids(fref));
    assert.fail(
      `the replicas and the reference disagree after ${GATEWAY_RETRY_BOUND_MS} ms\n` +
        `only on the replicas:\n${[...fa, ...fb].filter((f) => !theirs.has(`${f.kind}:${f.id}`)).map(show).join('\n')}\n` +
        `only on the reference:\n${fref.filter((f) => !mine.has(`${f.kind}:${f.id}`)).map(show).join('\n')}`,
    );
  });
  assert.ok(fref.length >= 4, `the load produced findings (${fref.length})`);
  assert.ok(fa.length > 0 && fb.length > 0, `both replicas took sessions with findings (${fa.length}, ${fb.length})`);

  // Every session the reference holds is held by exactly one replica.
  let held = 0;
  for (const key of tee.sessionKeys) {
    const [ra, rb, rr] = await Promise.all([a, b, ref].map((d) => getJson(`${d.httpUrl}/api/v1/sessions/${key}?scope=local`)));
    const on = [ra!.status, rb!.status].filter((s) => s === 200).length;
    assert.ok(on <= 1, `session ${key} is on both replicas`);
    if (rr!.status === 200) {
      held++;
      assert.equal(on, 1, `session ${key} (held by the reference) is on no replica`);
    }
  }
  assert.ok(held >= 10, `only ${held} sessions compared`);
  t.diagnostic(`${tee.sessionKeys.size} sessions, ${held} held; findings: reference ${fref.length}, replicas ${fa.length} + ${fb.length}; acknowledged by B before the kill ${acked.length}; ${tee.counts.spans} spans in ${tee.counts.ok} requests`);

  // One API across replicas: B (started with --peers A) answers for both.
  const merged = await getJson(`${b.httpUrl}/api/v1/findings?limit=1000`);
  assert.deepEqual(merged.body.unavailable, []);
  assert.deepEqual(ids(merged.body.items), ids(fref));

  // The gateway dropped nothing: every failed send during the outage was retried. Its metrics
  // count only batches a full queue refused (load_balancing discards its per-replica
  // sub-exporters' telemetry); a batch given up after its retries shows only in its log.
  const gwMetrics = await (await fetch(gateway.metricsUrl)).text();
  const dropped = [...gwMetrics.matchAll(/^otelcol_exporter_send_failed_spans(?:_total)?\{[^}]*\} (\S+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  assert.equal(dropped, 0, 'the gateway refused spans (a full queue)');
  const droppedLog = gateway.output().split('\n').filter((l) => /Dropping data|Rejecting data/.test(l));
  assert.deepEqual(droppedLog, [], 'the gateway gave up on spans after its retries');
  assert.match(gwMetrics, /otelcol_exporter_sent_spans/, 'the gateway exported through load_balancing');
});

test('the Collector built from collector/otelcol accepts every shipped config (otelcol validate)', { skip: SKIP, timeout: 60_000 }, async () => {
  const bin = otelcolBinary()!;
  const env = { PATH: process.env.PATH, FORKWATCH_DETECTORS: '[detector-1:4317, detector-2:4317]', FORKWATCH_GATEWAY_ENDPOINT: 'http://gateway:4318' };
  for (const file of ['gateway.yaml', 'agent.yaml']) {
    const r = spawnSync(bin, ['validate', '--config', fileURLToPath(new URL(`../../collector/otel/${file}`, import.meta.url))], { env, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, `${file}: ${r.stderr}`);
  }
  // And refuses a config naming a component it was not built with: the check is real.
  const bad = join(mkdtempSync(join(tmpdir(), 'forkwatch-otelcol-')), 'bad.yaml');
  writeFileSync(bad, readFileSync(fileURLToPath(new URL('../../collector/otel/gateway.yaml', import.meta.url)), 'utf8').replace('load_balancing:', 'kafka:'));
  const r = spawnSync(bin, ['validate', '--config', bad], { env, encoding: 'utf8', timeout: 30_000 });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /kafka/);
});
