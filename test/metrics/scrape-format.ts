import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** True when Prometheus' `promtool` is on PATH (the format checks below need it). */
export const hasPromtool = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;

/** Lints Prometheus text format with `promtool check metrics`; returns its output, throws on failure. */
export function promtoolCheckText(body: string): string {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0) throw new Error(`promtool check metrics failed (${r.status}): ${r.stdout}${r.stderr}`);
  return r.stdout + r.stderr;
}

/**
 * Parses OpenMetrics with Prometheus' own OpenMetrics parser (`promtool tsdb create-blocks-from
 * openmetrics`). That importer insists on sample timestamps, which a scrape never has, so one is
 * added to each sample line first (before any exemplar); everything else is checked as served.
 */
export function promtoolCheckOpenMetrics(body: string): void {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-om-'));
  try {
    const stamped = body
      .split('\n')
      .map((l) => (l.startsWith('#') || l === '' ? l : l.replace(/^(\S+ \S+)( # .*)?$/, '$1 1700000000$2')))
      .join('\n');
    writeFileSync(join(dir, 'in.om'), stamped);
    const r = spawnSync('promtool', ['tsdb', 'create-blocks-from', 'openmetrics', join(dir, 'in.om'), join(dir, 'out')], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    if (r.status !== 0) throw new Error(`OpenMetrics parse failed (${r.status}): ${r.stdout}${r.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The value of one sample line in a text or OpenMetrics body, or undefined. */
export function sampleValue(body: string, name: string, labels = ''): number | undefined {
  const head = labels ? `${name}{${labels}} ` : `${name} `;
  const line = body.split('\n').find((l) => l.startsWith(head));
  return line === undefined ? undefined : Number(line.slice(head.length).split(' ')[0]);
}
