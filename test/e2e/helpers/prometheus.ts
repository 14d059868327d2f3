/**
 * Real Prometheus and Alertmanager for end-to-end alerting tests: each runs as a child process in
 * a temporary directory on a free 127.0.0.1 port, with a generated configuration around the
 * committed rule files and Alertmanager routing tree. A node HTTP server stands in for the pager.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { reservePort } from './reserve-port.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
/** Committed rule files loaded by every test Prometheus. */
export const RULES_DIR = join(REPO, 'collector/prometheus/rules');
/** Committed Alertmanager configuration the test Alertmanager is derived from. */
export const ALERTMANAGER_CONFIG = join(REPO, 'collector/alertmanager/alertmanager.yml');

/** How long a child process may take to answer its readiness endpoint, ms. */
export const START_TIMEOUT_MS = 20_000;
/** Bound on every HTTP call the helpers make, ms. */
export const HTTP_TIMEOUT_MS = 5_000;

function which(...candidates: string[]): string | undefined {
  for (const c of candidates) {
    const r = spawnSync('sh', ['-c', `command -v ${c}`], { encoding: 'utf8', timeout: 5_000 });
    if (r.status === 0) return r.stdout.trim();
  }
  return undefined;
}

/** Paths of the binaries; Debian names Alertmanager `prometheus-alertmanager`. */
export function findBinaries(): { prometheus?: string; alertmanager?: string } {
  return { prometheus: which('prometheus'), alertmanager: which('prometheus-alertmanager', 'alertmanager') };
}

/** Why these tests cannot run here (a missing binary), or undefined. */
export function missingBinaries(): string | undefined {
  const b = findBinaries();
  if (!b.prometheus) return 'prometheus not found (bash scripts/install-test-deps.sh installs it; Debian: apt-get install prometheus)';
  if (!b.alertmanager) return 'alertmanager not found (bash scripts/install-test-deps.sh installs it; Debian: apt-get install prometheus-alertmanager)';
  return undefined;
}

async function fetchWithTimeout(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
}

interface Child {
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

function spawnChild(cmd: string, args: string[]): Child {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (d: string): void => {
    // Logs are for failure messages only: keep the tail, bounded.
    out = (out + d).slice(-20_000);
  };
  child.stdout!.setEncoding('utf8').on('data', keep);
  child.stderr!.setEncoding('utf8').on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(t);
      }
    },
  };
}

async function waitReady(url: string, proc: Child, what: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`${what} exited with ${proc.child.exitCode}:\n${proc.output()}`);
    try {
      const r = await fetchWithTimeout(url);
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${what} not ready within ${START_TIMEOUT_MS} ms:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// ---------------------------------------------------------------- webhook receiver

/** One alert of an Alertmanager webhook notification. */
export interface WebhookAlert {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** One notification Alertmanager posted, with the path it was posted to (`/page`, `/ticket`). */
export interface WebhookNotification {
  path: string;
  receiver: string;
  status: string;
  alerts: WebhookAlert[];
}

export interface WebhookReceiver {
  /** Base URL, e.g. http://127.0.0.1:PORT (receivers post to URL + /page or /ticket). */
  url: string;
  notifications(): WebhookNotification[];
  /** Resolves with the first notification matching `pred`; rejects after `timeoutMs`. */
  waitFor(pred: (n: WebhookNotification) => boolean, timeoutMs: number): Promise<WebhookNotification>;
  close(): Promise<void>;
}

/** Maximum notifications kept; older ones are dropped. */
export const WEBHOOK_MAX_NOTIFICATIONS = 1_000;
/** Maximum body accepted per notification, bytes. */
export const WEBHOOK_MAX_BODY_BYTES = 1_000_000;

/** Starts an HTTP server on 127.0.0.1:0 that records every JSON body posted to it. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: WebhookNotification[] = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => {
      body += d;
      if (body.length > WEBHOOK_MAX_BODY_BYTES) req.destroy();
    });
    req.on('end', () => {
      try {
        const n = JSON.parse(body) as Omit<WebhookNotification, 'path'>;
        received.push({ path: req.url ?? '', receiver: n.receiver, status: n.status, alerts: n.alerts ?? [] });
        if (received.length > WEBHOOK_MAX_NOTIFICATIONS) received.shift();
        for (const w of waiters) w();
        res.end('ok');
      } catch {
        res.statusCode = 400;
        res.end('bad json');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    notifications: () => [...received],
    waitFor: (pred, timeoutMs) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          const hit = received.find(pred);
          if (!hit) return false;
          clearTimeout(timer);
          waiters.delete(onNew);
          resolve(hit);
          return true;
        };
        const onNew = (): void => void check();
        const timer = setTimeout(() => {
          waiters.delete(onNew);
          reject(new Error(`no matching notification within ${timeoutMs} ms; got ${JSON.stringify(received)}`));
        }, timeoutMs);
        if (!check()) waiters.add(onNew);
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------- Alertmanager

export interface AlertmanagerProcess {
  /** Base URL, e.g. http://127.0.0.1:PORT */
  url: string;
  /** host:port, for Prometheus' alerting config. */
  address: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts Alertmanager with the committed routing tree and inhibit rules, its receivers pointed at
 * `webhookUrl` (`/page`, `/ticket`) and every group_wait / group_interval cut to 1 s.
 */
export async function startAlertmanager(opts: { webhookUrl: string }): Promise<AlertmanagerProcess> {
  const bin = findBinaries().alertmanager;
  if (!bin) throw new Error(missingBinaries());
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-am-'));
  const config = readFileSync(ALERTMANAGER_CONFIG, 'utf8')
    .replaceAll('http://webhook-sink:8080', opts.webhookUrl)
    .replace(/group_wait: \S+/g, 'group_wait: 1s')
    .replace(/group_interval: \S+/g, 'group_interval: 1s');
  if (!config.includes(opts.webhookUrl)) throw new Error('alertmanager.yml no longer points at http://webhook-sink:8080');
  writeFileSync(join(dir, 'alertmanager.yml'), config);
  const port = await reservePort();
  const proc = spawnChild(bin, [
    `--config.file=${join(dir, 'alertmanager.yml')}`,
    `--storage.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    // No gossip: an empty cluster address disables clustering (no fixed port 9094).
    '--cluster.listen-address=',
  ]);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(`${url}/-/ready`, proc, 'alertmanager');
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return {
    url,
    address: `127.0.0.1:${port}`,
    output: proc.output,
    stop: async () => {
      await proc.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------- Prometheus

/** One sample of an instant-vector result. */
export interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface PrometheusProcess {
  /** Base URL, e.g. http://127.0.0.1:PORT */
  url: string;
  /** Instant query at now; rejects on a PromQL error. Scalars come back as one sample with no labels. */
  query(expr: string): Promise<PromSample[]>;
  output(): string;
  stop(): Promise<void>;
}

/** Scrape and rule evaluation interval of the test Prometheus, seconds. */
export const TEST_SCRAPE_INTERVAL_S = 1;

/**
 * Starts Prometheus scraping `targets` (host:port of detectors' HTTP ports) as job `forkwatch`
 * every second, evaluating the committed rules every second, and alerting to `alertmanager`.
 */
export async function startPrometheus(opts: { targets: string[]; alertmanager?: string; job?: string }): Promise<PrometheusProcess> {
  const bin = findBinaries().prometheus;
  if (!bin) throw new Error(missingBinaries());
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-prom-'));
  const rules = readdirSync(RULES_DIR)
    .filter((f) => f.endsWith('.yml'))
    .map((f) => join(RULES_DIR, f));
  // JSON is YAML: no YAML writer needed.
  const config = {
    global: { scrape_interval: `${TEST_SCRAPE_INTERVAL_S}s`, scrape_timeout: `${TEST_SCRAPE_INTERVAL_S}s`, evaluation_interval: `${TEST_SCRAPE_INTERVAL_S}s` },
    rule_files: rules,
    ...(opts.alertmanager ? { alerting: { alertmanagers: [{ static_configs: [{ targets: [opts.alertmanager] }] }] } } : {}),
    scrape_configs: [{ job_name: opts.job ?? 'forkwatch', static_configs: [{ targets: opts.targets }] }],
  };
  writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config, null, 2));
  const port = await reservePort();
  const proc = spawnChild(bin, [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    // Firing alerts are re-sent every second, so a late Alertmanager start cannot lose one.
    '--rules.alert.resend-delay=1s',
  ]);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(`${url}/-/ready`, proc, 'prometheus');
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return {
    url,
    output: proc.output,
    query: async (expr) => {
      const r = await fetchWithTimeout(`${url}/api/v1/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ query: expr }).toString(),
      });
      const body = (await r.json()) as { status: string; error?: string; data?: { resultType: string; result: unknown } };
      if (body.status !== 'success') throw new Error(`query ${expr} failed: ${body.error}`);
      const { resultType, result } = body.data!;
      if (resultType === 'scalar') return [{ metric: {}, value: result as [number, string] }];
      if (resultType === 'vector') return result as PromSample[];
      throw new Error(`query ${expr} returned a ${resultType}`);
    },
    stop: async () => {
      await proc.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
