import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import ts from 'typescript';
import { readRepoFile, repoPath } from './ops-files.js';

// Each dashboard JSON is typechecked against Grafana's own published types (@grafana/schema's
// Dashboard): as a fresh object literal, so a misspelt or unknown field, a wrong value type, or
// a missing required field is a compile error, not a dashboard Grafana silently half-loads.
// The one widening: a Prometheus annotation keeps its own fields beside the generic ones (Grafana's
// Prometheus annotation editor reads them there; the schema's AnnotationQuery has no index
// signature). Only these names are allowed, so a typo still fails.
const PREAMBLE = `import type { AnnotationQuery, Dashboard } from '@grafana/schema';
interface PrometheusAnnotationFields { expr?: string; step?: string; titleFormat?: string; textFormat?: string; tagKeys?: string; useValueForTime?: boolean }
type CheckedDashboard = Omit<Dashboard, 'annotations'> & { annotations?: { list?: Array<AnnotationQuery & PrometheusAnnotationFields> } };`;

const DASHBOARDS = readdirSync(repoPath('dashboards')).filter((f) => f.endsWith('.json'));

function typecheck(name: string, json: string): string[] {
  // A virtual file next to the tests, so `@grafana/schema` resolves from the repository's node_modules.
  const file = repoPath(`test/ops/__dashboard_${name.replace(/\W/g, '_')}.ts`);
  const source = `${PREAMBLE}\nexport const dashboard: CheckedDashboard = ${json};\n`;
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (f, lang, onError, create) => (f === file ? ts.createSourceFile(f, source, lang, true) : getSourceFile(f, lang, onError, create));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (f) => f === file || fileExists(f);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? `line ${d.file.getLineAndCharacterOfPosition(d.start).line}: ` : '';
    return `${where}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

test('both dashboards are checked', () => {
  assert.deepEqual(DASHBOARDS.sort(), ['forkwatch-fleet.json', 'forkwatch-session.json']);
});

for (const f of DASHBOARDS) {
  test(`dashboards/${f} typechecks as @grafana/schema's Dashboard`, { timeout: 120_000 }, () => {
    const errors = typecheck(f, readRepoFile(`dashboards/${f}`));
    assert.deepEqual(errors, [], errors.join('\n\n'));
  });
}

test('the check fails on a field Grafana does not know and on a wrong type', { timeout: 120_000 }, () => {
  const d = JSON.parse(readRepoFile('dashboards/forkwatch-session.json')) as Record<string, unknown>;
  const misspelt = typecheck('misspelt', JSON.stringify({ ...d, shemaVersion: 42 }));
  assert.ok(misspelt.some((e) => /shemaVersion/.test(e)), misspelt.join('\n'));
  const wrongType = typecheck('wrong_type', JSON.stringify({ ...d, refresh: 5 }));
  assert.ok(wrongType.some((e) => /number.*not assignable to type 'string'/.test(e)), wrongType.join('\n'));
});
