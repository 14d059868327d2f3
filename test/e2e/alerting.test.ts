/**
 * End to end: real Prometheus evaluating the committed rules, real Alertmanager with the committed
 * routing tree, a webhook standing in for the pager. First against a stub metrics endpoint (the
 * alerting path alone), then against real `forkwatch serve` fed by `forkwatch demo`.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { dashboardPromQueries, substituteGrafanaVariables } from '../ops/ops-files.js';
import { CLI, runDemo, startDetector, waitFor } from './helpers/detector.js';
import {
  missingBinaries,
  startAlertmanager,
  startPrometheus,
  startWebhookReceiver,
  type PrometheusProcess,
  type WebhookNotification,
  type WebhookReceiver,
} from './helpers/prometheus.js';

const SKIP_BINARIES = missingBinaries() ?? false;
const SKIP_CLI = existsSync(CLI) ? false : `${CLI} missing: run npm run build first`;
/** How long a fork may take from counter increase to webhook: scrape 1 s + eval 1 s + group_wait 1 s, with slack. */
const PAGE_TIMEOUT_MS = 30_000;
/**
 * The demo's timers at 3x (`forkwatch demo --scale 3`): at 1x a loaded machine (load ~5) took
 * 1.9 s to initialize and the tool call hit its 1.5 s request timeout before the fork happened.
 */
const DEMO_SCALE = ['--scale', '3'];

/** Dashboard queries allowed to be empty on a short healthy run: the series appears on first use. */
const MAY_BE_EMPTY = [/forkwatch_correlation_dropped_total/];

interface Stack {
  webhook: WebhookReceiver;
  prom: PrometheusProcess;
}

async function startStack(t: TestContext, targets: string[]): Promise<Stack> {
  const webhook = await startWebhookReceiver();
  t.after(() => webhook.close());
  const am = await startAlertmanager({ webhookUrl: webhook.url });
  t.after(() => am.stop());
  const prom = await startPrometheus({ targets, alertmanager: am.address });
  t.after(() => prom.stop());
  return { webhook, prom };
}

const isForkPage = (n: WebhookNotification): boolean =>
  n.path === '/page' && n.alerts.some((a) => a.status === 'firing' && a.labels.alertname === 'MCPSessionForkDetected');

describe('alerting end to end', { skip: SKIP_BINARIES }, () => {
  test('stub metrics: a fork counter increase pages through the page receiver with its annotations', { timeout: 60_000 }, async (t) => {
    let forks = 0;
    const stub = createServer((_req, res) => {
      res.setHeader('content-type', 'text/plain; version=0.0.4');
      res.end(`# TYPE forkwatch_forks_total counter\nforkwatch_forks_total{kind="minted_on_resume",service="stub-svc"} ${forks}\n`);
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => stub.close(() => resolve())));
    const target = `127.0.0.1:${(stub.address() as AddressInfo).port}`;
    const { webhook, prom } = await startStack(t, [target]);

    // The zero must be scraped before the increment, as the detector's pre-created series are.
    await waitFor(async () => (await prom.query('count_over_time(forkwatch_forks_total[1m]) >= 2')).length > 0, 15_000);
    assert.deepEqual(webhook.notifications(), [], 'nothing may page while forks stay at 0');
    forks = 1;

    const n = await webhook.waitFor(isForkPage, PAGE_TIMEOUT_MS);
    assert.equal(n.receiver, 'page');
    const alert = n.alerts.find((a) => a.labels.alertname === 'MCPSessionForkDetected')!;
    assert.equal(alert.labels.severity, 'page');
    assert.equal(alert.labels.service, 'stub-svc');
    assert.equal(alert.labels.kind, 'minted_on_resume');
    assert.equal(alert.labels.instance, target);
    assert.equal(alert.annotations.runbook_url, 'https://github.com/forkwatch/forkwatch/blob/main/docs/runbook.md#mcpsessionforkdetected');
    assert.match(alert.annotations.description ?? '', new RegExp(`http://${target}/ui/\\?kind=minted_on_resume&service=stub-svc`));
    assert.ok(!webhook.notifications().some((x) => x.path === '/ticket'), 'a fork is a page, not a ticket');
  });

  test('naive scenario: MCPSessionForkDetected reaches the page receiver, and every dashboard query returns data', { skip: SKIP_CLI, timeout: 150_000 }, async (t) => {
    const det = await startDetector({ args: ['--decision-window-ms', '2000'] });
    t.after(() => det.stop());
    const { webhook, prom } = await startStack(t, [new URL(det.httpUrl).host]);
    await waitFor(async () => (await prom.query('up{job="forkwatch"} == 1')).length > 0, 15_000);

    const demo = await runDemo({ otlpEndpoint: det.otlpUrl, scenario: 'naive', args: DEMO_SCALE, timeoutMs: 90_000 });
    const n = await webhook.waitFor(isForkPage, PAGE_TIMEOUT_MS).catch((err: unknown) => {
      throw new Error(`${String(err)}\n--- demo (exit ${demo.code}):\n${demo.output}\n--- detector:\n${det.output()}`);
    });
    assert.equal(n.receiver, 'page');
    const alert = n.alerts.find((a) => a.labels.alertname === 'MCPSessionForkDetected')!;
    assert.ok(alert.labels.service && alert.labels.kind, JSON.stringify(alert.labels));
    // The description opens the incident view (/ui/) with the alert's kind and service.
    assert.match(alert.annotations.description ?? '', /\/ui\/\?kind=/);

    // The finding the alert links to exists on the detector.
    const findings = (await (await fetch(`${det.httpUrl}/api/v1/findings?kind=${alert.labels.kind}&service=${encodeURIComponent(alert.labels.service!)}&since=15m`)).json()) as { items: unknown[] };
    assert.ok(findings.items.length > 0, 'the alert links to findings that exist');

    // Every PromQL query of the dashboards runs and returns data against this Prometheus.
    const queries = ['dashboards/forkwatch-fleet.json', 'dashboards/forkwatch-session.json'].flatMap((f) => dashboardPromQueries(f));
    assert.ok(queries.length >= 15, `only ${queries.length} dashboard queries found`);
    const empty: string[] = [];
    for (const q of queries) {
      const expr = substituteGrafanaVariables(q.expr);
      const result = await prom.query(expr);
      if (result.length === 0 && !MAY_BE_EMPTY.some((re) => re.test(expr))) empty.push(`${q.panel}/${q.refId}: ${expr}`);
    }
    assert.deepEqual(empty, [], 'dashboard queries without data');
  });

  test('guarded scenario on a fresh detector: no page', { skip: SKIP_CLI, timeout: 150_000 }, async (t) => {
    const det = await startDetector({ args: ['--decision-window-ms', '2000'] });
    t.after(() => det.stop());
    const { webhook, prom } = await startStack(t, [new URL(det.httpUrl).host]);
    await waitFor(async () => (await prom.query('up{job="forkwatch"} == 1')).length > 0, 15_000);

    const demo = await runDemo({ otlpEndpoint: det.otlpUrl, scenario: 'guarded', args: DEMO_SCALE, timeoutMs: 90_000 });
    // Not vacuous: the detector got the guarded run's spans and Prometheus scraped them.
    await waitFor(async () => (await prom.query('sum(forkwatch_spans_received_total) > 0')).length > 0, 15_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n--- demo (exit ${demo.code}):\n${demo.output}\n--- detector:\n${det.output()}`);
    });
    // Absence needs a wait: 5 evaluations (1 s each) and Alertmanager's 1 s group_wait.
    await new Promise((r) => setTimeout(r, 5_000));
    const forks = await prom.query('sum(forkwatch_forks_total)');
    assert.equal(forks[0]?.value[1], '0', `guarded run counted forks:\n${demo.output}`);
    assert.deepEqual(await prom.query('ALERTS{severity="page"}'), [], 'no page alert, not even pending');
    assert.deepEqual(webhook.notifications().filter((x) => x.path === '/page'), []);
  });
});
