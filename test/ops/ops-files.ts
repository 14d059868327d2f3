/**
 * Shared helpers of the ops tests: repository paths, a YAML reader, and the contract's metric
 * names. YAML is read with the `yaml` package (a dev dependency).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

/** Absolute path of the repository root. */
export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Absolute path of a repository file. */
export function repoPath(...parts: string[]): string {
  return join(REPO, ...parts);
}

/** Per-command limit for external tools (promtool, amtool, docker-compose, python3), ms. */
export const TOOL_TIMEOUT_MS = 20_000;

/** Whether `cmd` can be run (found on PATH). */
export function hasBinary(cmd: string): boolean {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8', timeout: TOOL_TIMEOUT_MS });
  return r.status === 0;
}

export interface ToolResult {
  status: number | null;
  output: string;
}

/** Runs a command in the repository root, bounded by TOOL_TIMEOUT_MS; stdout and stderr joined. */
export function run(cmd: string, args: string[]): ToolResult {
  const r = spawnSync(cmd, args, { cwd: REPO, encoding: 'utf8', timeout: TOOL_TIMEOUT_MS });
  return { status: r.status, output: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

/** Why YAML cannot be read here, or undefined when it can (always readable: `yaml` is a dev dependency). */
export function yamlUnavailable(): string | undefined {
  return undefined;
}

/** Parses a YAML file (relative to the repository root) into plain JSON values. */
export function loadYaml(relPath: string): unknown {
  return parseYaml(readFileSync(repoPath(relPath), 'utf8')) as unknown;
}

/** Reads a repository text file. */
export function readRepoFile(relPath: string): string {
  return readFileSync(repoPath(relPath), 'utf8');
}

/** Whether a repository path exists. */
export function repoHas(relPath: string): boolean {
  return existsSync(repoPath(relPath));
}

/** Metric names the detector exports (the ops brief's contract), plus what Prometheus adds. */
export const DETECTOR_METRICS: readonly string[] = [
  'forkwatch_forks_total',
  'forkwatch_request_anomalies_total',
  'forkwatch_orphaned_progress_tokens',
  'forkwatch_progress_tokens_orphaned_total',
  'forkwatch_resumes_total',
  'forkwatch_sessions_active',
  'forkwatch_spans_received_total',
  'forkwatch_spans_ignored_total',
  'forkwatch_spans_rejected_total',
  'forkwatch_detection_lag_seconds_bucket',
  'forkwatch_detection_lag_seconds_sum',
  'forkwatch_detection_lag_seconds_count',
  'forkwatch_otlp_requests_total',
  'forkwatch_correlation_dropped_total',
  'forkwatch_tracked_sessions',
  'forkwatch_ingest_queue_spans',
  'forkwatch_storage_errors_total',
  'forkwatch_last_span_received_timestamp_seconds',
  'forkwatch_build_info',
  'forkwatch_ready',
  // prom-client's process and Node.js families, which `serve` registers too (sizing panels).
  'process_cpu_seconds_total',
  'process_resident_memory_bytes',
  'nodejs_heap_size_used_bytes',
];

/** Series Prometheus itself produces. */
export const PROMETHEUS_SERIES: readonly string[] = ['up', 'ALERTS', 'ALERTS_FOR_STATE'];

const PROMQL_WORDS = new Set([
  'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'offset', 'bool',
  'inf', 'nan', 'atan2',
]);

/**
 * Metric names referenced by a PromQL expression: identifiers that are not functions, keywords,
 * grouping labels, label matchers, durations or Grafana variables.
 */
export function promqlMetricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/'(?:[^'\\]|\\.)*'/g, "''")
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '')
    .replace(/\$\{[^}]*\}|\$\w+/g, '');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/(?<![\w:.$])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    const name = m[1] as string;
    if (m[2]) continue; // a function call
    if (PROMQL_WORDS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names];
}

/** GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to '-'. */
export function githubAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** A PromQL expression of a dashboard, with where it came from. */
export interface DashboardQuery {
  dashboard: string;
  panel: string;
  refId: string;
  expr: string;
}

interface PanelLike {
  title?: string;
  type?: string;
  panels?: PanelLike[];
  targets?: Array<{ refId?: string; expr?: string }>;
}

/** Every panel of a dashboard, rows' nested panels included. */
export function dashboardPanels(dashboard: { panels?: PanelLike[] }): PanelLike[] {
  const out: PanelLike[] = [];
  const walk = (ps: PanelLike[] | undefined): void => {
    for (const p of ps ?? []) {
      out.push(p);
      walk(p.panels);
    }
  };
  walk(dashboard.panels);
  return out;
}

/** Every PromQL `expr` of a dashboard's panels and annotations. */
export function dashboardPromQueries(file: string): DashboardQuery[] {
  const d = JSON.parse(readRepoFile(file)) as {
    panels?: PanelLike[];
    annotations?: { list?: Array<{ name?: string; expr?: string }> };
  };
  const out: DashboardQuery[] = [];
  for (const p of dashboardPanels(d)) {
    for (const t of p.targets ?? []) {
      if (t.expr) out.push({ dashboard: file, panel: p.title ?? '', refId: t.refId ?? '', expr: t.expr });
    }
  }
  for (const a of d.annotations?.list ?? []) {
    if (a.expr) out.push({ dashboard: file, panel: `annotation ${a.name ?? ''}`, refId: '', expr: a.expr });
  }
  return out;
}

/**
 * Replaces Grafana variables in a query so Prometheus can run it: `$service` (and other
 * multi-value variables) match everything, `$__rate_interval` and friends become fixed ranges.
 */
export function substituteGrafanaVariables(expr: string, rateInterval = '1m', range = '5m'): string {
  return expr
    .replace(/\$__rate_interval|\$\{__rate_interval\}/g, rateInterval)
    .replace(/\$__interval|\$\{__interval\}/g, '15s')
    .replace(/\$__range|\$\{__range\}/g, range)
    .replace(/\$\{?(\w+)\}?/g, '.*');
}
