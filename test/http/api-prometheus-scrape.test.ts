import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { createApiServer } from '../../src/http/api-server.js';
import { createMetrics } from '../../src/metrics/create-metrics.js';
import { openStore } from '../../src/storage/open-store.js';
import { reservePort } from '../e2e/helpers/reserve-port.js';

const hasPrometheus = spawnSync('prometheus', ['--version'], { stdio: 'ignore' }).status === 0;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

async function poll<T>(what: string, deadline: number, fn: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(200);
  }
}

test('a real Prometheus scrapes /metrics, negotiates OpenMetrics and stores the trace_id exemplar', { skip: !hasPrometheus && 'prometheus not installed', timeout: 45_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-prom-'));
  const store = openStore({ path: ':memory:' });
  const metrics = createMetrics();
  metrics.onResume('forked', 'svc-a', TRACE);
  metrics.onFinding(
    {
      id: 'f1', kind: 'minted_on_resume', service: 'svc-a', sessionKey: 'k', summary: 's', firstSeenMs: 1, detectedAtMs: 2,
      evidence: [{ traceId: TRACE, spanId: '00f067aa0ba902b7', side: 'server', timeMs: 1, spanName: 'forkwatch.resume', shows: 's' }],
    },
    true,
  );
  const app = await createApiServer({ store, lineage: () => undefined, ready: () => true, metrics });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const target = `127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const promPort = await reservePort();
  writeFileSync(
    join(dir, 'prometheus.yml'),
    `global: { scrape_interval: 1s, scrape_timeout: 1s }\nscrape_configs:\n  - job_name: forkwatch\n    static_configs: [{ targets: ['${target}'] }]\n`,
  );
  const prom = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
      '--enable-feature=exemplar-storage',
    ],
    { stdio: 'ignore' },
  );
  t.after(async () => {
    prom.kill('SIGKILL');
    await app.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const api = `http://127.0.0.1:${promPort}/api/v1`;
  const deadline = Date.now() + 30_000;

  const value = await poll('the forks series', deadline, async () => {
    const res = await fetch(`${api}/query?query=${encodeURIComponent('forkwatch_forks_total{kind="minted_on_resume",service="svc-a"}')}`, { signal: AbortSignal.timeout(2000) });
    const body = (await res.json()) as { data: { result: Array<{ value: [number, string] }> } };
    return body.data.result[0]?.value[1];
  });
  assert.equal(value, '1');

  const health = await poll('target health', deadline, async () => {
    const res = await fetch(`${api}/targets`, { signal: AbortSignal.timeout(2000) });
    const body = (await res.json()) as { data: { activeTargets: Array<{ health: string; lastError: string }> } };
    const tg = body.data.activeTargets[0];
    return tg && tg.health !== 'unknown' ? tg : undefined;
  });
  assert.equal(health.health, 'up', health.lastError);

  const exemplars = await poll('the exemplar', deadline, async () => {
    const q = encodeURIComponent('forkwatch_resumes_total{outcome="forked"}');
    const res = await fetch(`${api}/query_exemplars?query=${q}&start=${Math.floor(Date.now() / 1000) - 600}&end=${Math.ceil(Date.now() / 1000) + 60}`, { signal: AbortSignal.timeout(2000) });
    const body = (await res.json()) as { data: Array<{ exemplars: Array<{ labels: Record<string, string> }> }> };
    const ex = body.data.flatMap((s) => s.exemplars);
    return ex.length > 0 ? ex : undefined;
  });
  assert.equal(exemplars[0]!.labels.trace_id, TRACE);
});
