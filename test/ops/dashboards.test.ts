import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import {
  DETECTOR_METRICS,
  PROMETHEUS_SERIES,
  dashboardPanels,
  dashboardPromQueries,
  loadYaml,
  promqlMetricNames,
  readRepoFile,
  repoPath,
  substituteGrafanaVariables,
  yamlUnavailable,
} from './ops-files.js';

const SKIP = yamlUnavailable() ?? false;
const DASHBOARDS = readdirSync(repoPath('dashboards'))
  .filter((f) => f.endsWith('.json'))
  .map((f) => `dashboards/${f}`);

interface Ref {
  type?: string;
  uid?: string;
}
interface Panel {
  id?: number;
  type?: string;
  title?: string;
  datasource?: Ref;
  targets?: Array<{ datasource?: Ref; expr?: string; exemplar?: boolean }>;
  fieldConfig?: { defaults?: { links?: Array<{ url: string }> } };
}
interface Dashboard {
  uid?: string;
  schemaVersion?: number;
  panels?: Panel[];
  templating?: { list?: Array<{ name: string; datasource?: Ref }> };
  annotations?: { list?: Array<{ datasource?: Ref; builtIn?: number }> };
}

function load(file: string): Dashboard {
  return JSON.parse(readRepoFile(file)) as Dashboard;
}

function provisionedUids(): Set<string> {
  const uids = new Set<string>();
  const dir = 'dashboards/provisioning/datasources';
  for (const f of readdirSync(repoPath(dir)).filter((x) => /\.ya?ml$/.test(x))) {
    const doc = loadYaml(`${dir}/${f}`) as { datasources?: Array<{ uid?: string }> };
    for (const ds of doc.datasources ?? []) if (ds.uid) uids.add(ds.uid);
  }
  return uids;
}

function recordingRules(): Set<string> {
  const doc = loadYaml('collector/prometheus/rules/forkwatch.rules.yml') as { groups: Array<{ rules: Array<{ record?: string }> }> };
  return new Set(doc.groups.flatMap((g) => g.rules).flatMap((r) => (r.record ? [r.record] : [])));
}

test('both dashboards exist', () => {
  assert.deepEqual(DASHBOARDS.sort(), ['dashboards/forkwatch-fleet.json', 'dashboards/forkwatch-session.json']);
});

for (const file of DASHBOARDS) {
  test(`${file}: schemaVersion 42, a uid, unique panel ids`, () => {
    const d = load(file);
    assert.equal(d.schemaVersion, 42);
    assert.match(d.uid ?? '', /^[a-z0-9-]{1,40}$/);
    const ids = dashboardPanels(d as never).map((p) => (p as Panel).id);
    assert.ok(ids.every((id) => typeof id === 'number'), 'every panel has a numeric id');
    assert.equal(new Set(ids).size, ids.length, `duplicate panel ids: ${ids.join(',')}`);
  });

  test(`${file}: every datasource reference is a provisioned datasource uid`, { skip: SKIP, timeout: 30_000 }, () => {
    const uids = provisionedUids();
    const d = load(file);
    const refs: Array<[string, Ref | undefined]> = [];
    for (const p of dashboardPanels(d as never) as Panel[]) {
      if (p.type === 'row') continue;
      refs.push([`panel ${p.title}`, p.datasource]);
      for (const t of p.targets ?? []) refs.push([`panel ${p.title} target`, t.datasource ?? p.datasource]);
    }
    for (const v of d.templating?.list ?? []) if (v.datasource) refs.push([`variable ${v.name}`, v.datasource]);
    for (const a of d.annotations?.list ?? []) if (!a.builtIn) refs.push(['annotation', a.datasource]);
    assert.ok(refs.length > 0);
    for (const [where, ref] of refs) assert.ok(ref?.uid && uids.has(ref.uid), `${file} ${where}: datasource ${JSON.stringify(ref)} is not provisioned (${[...uids].join(', ')})`);
  });

  test(`${file}: every metric in its PromQL is a detector metric or a recording rule`, { skip: SKIP, timeout: 30_000 }, () => {
    const known = new Set([...DETECTOR_METRICS, ...PROMETHEUS_SERIES, ...recordingRules()]);
    for (const q of dashboardPromQueries(file)) {
      for (const name of promqlMetricNames(q.expr)) assert.ok(known.has(name), `${q.panel}/${q.refId}: unknown metric ${name} in ${q.expr}`);
    }
  });
}

test('fleet dashboard: service variable, exemplars on forks and lag, findings data links', () => {
  const d = load('dashboards/forkwatch-fleet.json');
  assert.ok(d.templating?.list?.some((v) => v.name === 'service'));
  const panels = dashboardPanels(d as never) as Panel[];
  const forks = panels.find((p) => p.title === 'Session forks by kind and service');
  assert.ok(forks?.targets?.every((t) => t.exemplar === true));
  assert.match(forks?.fieldConfig?.defaults?.links?.[0]?.url ?? '', /\/ui\/\?kind=\$\{__field\.labels\.kind\}&service=\$\{__field\.labels\.service\}/);
  const lag = panels.find((p) => p.title === 'Detection lag p50 / p99');
  assert.equal(lag?.targets?.length, 2);
  assert.ok(lag?.targets?.every((t) => t.exemplar === true));
  // Panels the brief asks for are all there.
  const metrics = dashboardPromQueries('dashboards/forkwatch-fleet.json').flatMap((q) => promqlMetricNames(q.expr));
  for (const m of ['forkwatch_forks_total', 'forkwatch_request_anomalies_total', 'forkwatch_orphaned_progress_tokens', 'forkwatch_resumes_total', 'forkwatch_sessions_active', 'forkwatch_detection_lag_seconds_bucket', 'forkwatch_spans_received_total', 'forkwatch_spans_ignored_total', 'forkwatch_spans_rejected_total', 'forkwatch_ingest_queue_spans', 'forkwatch_storage_errors_total']) {
    assert.ok(metrics.includes(m), `no panel uses ${m}`);
  }
});

test('data links open the incident view (/ui/), never the JSON API', () => {
  const links: string[] = [];
  // Query targets (the Infinity datasource's `url`) read the API; links are what people click.
  for (const file of DASHBOARDS) {
    const d = JSON.parse(readRepoFile(file)) as unknown;
    const collect = (v: unknown, inLinks: boolean): void => {
      if (Array.isArray(v)) v.forEach((x) => collect(x, inLinks));
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (inLinks && k === 'url' && typeof x === 'string') links.push(`${file}: ${x}`);
          // Field overrides carry links as { id: 'links', value: [...] }.
          else collect(x, inLinks || k === 'links' || (k === 'value' && (v as { id?: unknown }).id === 'links'));
        }
      }
    };
    collect(d, false);
  }
  assert.ok(links.length >= 6, links.join('\n'));
  for (const l of links) assert.match(l, /\/ui\/(\?|findings\/|sessions\/)/, l);
  assert.ok(links.some((l) => l.includes('forkwatch-session.json: ${replica}/ui/sessions/${session}')));
});

test('promqlMetricNames finds metrics and skips functions, keywords, labels and variables', () => {
  assert.deepEqual(
    promqlMetricNames('histogram_quantile(0.99, sum by (le) (rate(forkwatch_detection_lag_seconds_bucket{service=~"$service"}[$__rate_interval]))) / on (instance) group_left up offset 5m'),
    ['forkwatch_detection_lag_seconds_bucket', 'up'],
  );
  assert.equal(substituteGrafanaVariables('rate(x{service=~"$service"}[$__rate_interval])'), 'rate(x{service=~".*"}[1m])');
});
