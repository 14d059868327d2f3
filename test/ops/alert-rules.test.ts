import assert from 'node:assert/strict';
import { test } from 'node:test';
import { githubAnchor, loadYaml, readRepoFile, yamlUnavailable } from './ops-files.js';

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const SKIP = yamlUnavailable() ?? false;
/** Every runbook link shares this base, so moving the docs is one substitution. */
const RUNBOOK_BASE = 'https://github.com/forkwatch/forkwatch/blob/main/docs/runbook.md#';
const REQUIRED_ALERTS = [
  'MCPSessionForkDetected',
  'MCPOrphanedProgressTokens',
  'MCPResumeRejectionRateHigh',
  'MCPDuplicateToolExecution',
  'MCPOrphanedRequests',
  'ForkwatchIngestRejecting',
  'ForkwatchTelemetryMissing',
  'ForkwatchDown',
];

function alerts(): Rule[] {
  const doc = loadYaml('collector/prometheus/rules/forkwatch.rules.yml') as { groups: Array<{ rules: Rule[] }> };
  return doc.groups.flatMap((g) => g.rules).filter((r) => r.alert);
}

test('every required alert exists', { skip: SKIP, timeout: 30_000 }, () => {
  const names = new Set(alerts().map((a) => a.alert));
  for (const n of REQUIRED_ALERTS) assert.ok(names.has(n), `${n} missing`);
});

test('every alert has severity page|ticket, summary, description and a runbook_url into docs/runbook.md', { skip: SKIP, timeout: 30_000 }, () => {
  const runbook = readRepoFile('docs/runbook.md');
  const anchors = new Set(
    runbook
      .split('\n')
      .filter((l) => /^#{1,6}\s/.test(l))
      .map((l) => githubAnchor(l.replace(/^#+\s*/, ''))),
  );
  for (const a of alerts()) {
    assert.match(a.labels?.severity ?? '', /^(page|ticket)$/, `${a.alert}: severity`);
    assert.ok(a.annotations?.summary, `${a.alert}: summary`);
    assert.ok(a.annotations?.description, `${a.alert}: description`);
    const url = a.annotations?.runbook_url ?? '';
    assert.ok(url.startsWith(RUNBOOK_BASE), `${a.alert}: runbook_url ${url} must start with ${RUNBOOK_BASE}`);
    const anchor = url.slice(RUNBOOK_BASE.length);
    assert.ok(anchors.has(anchor), `${a.alert}: docs/runbook.md has no heading for #${anchor}`);
    // Links for people open the incident view, never raw JSON.
    assert.doesNotMatch(a.annotations?.description ?? '', /\/api\/v1\//, `${a.alert}: description links the JSON API`);
    if (/Findings/.test(a.annotations?.description ?? '')) assert.match(a.annotations!.description!, /\/ui\/\?/, `${a.alert}: findings link opens /ui/`);
  }
});

test('pages are the MCP correctness alerts (forks, orphaned tokens, duplicate executions) and ForkwatchDown', { skip: SKIP, timeout: 30_000 }, () => {
  const pages = alerts()
    .filter((a) => a.labels?.severity === 'page')
    .map((a) => a.alert)
    .sort();
  assert.deepEqual(pages, ['ForkwatchDown', 'MCPDuplicateToolExecution', 'MCPOrphanedProgressTokens', 'MCPSessionForkDetected']);
});

test('github anchors are computed as GitHub does', () => {
  assert.equal(githubAnchor('MCPSessionForkDetected'), 'mcpsessionforkdetected');
  assert.equal(githubAnchor('Silence it (temporarily)'), 'silence-it-temporarily');
});
