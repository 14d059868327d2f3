import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { inTestedRange, TESTED_MCP_SDK_VERSIONS } from '../../../packages/instrumentation/src/otel/supported-versions.js';
import { mayPatch } from '../../../packages/instrumentation/src/otel/version-gate.js';
import { missingPeers, missingPeersLine } from '../../../packages/instrumentation/src/otel/peer-check.js';

test('inTestedRange: the >=lo <hi form, prereleases of the lower bound out', () => {
  const r = '>=1.30.0 <1.33.0';
  for (const v of ['1.30.0', '1.31.5', '1.32.2']) assert.equal(inTestedRange(v, r), true, v);
  for (const v of ['1.29.0', '1.33.0', '2.0.0', '1.30.0-beta.1', 'garbage', undefined]) assert.equal(inTestedRange(v, r), false, String(v));
});

test('every tested range lies inside its peer range of package.json', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../../packages/instrumentation/package.json', import.meta.url), 'utf8')) as { peerDependencies: Record<string, string> };
  for (const [name, tested] of Object.entries(TESTED_MCP_SDK_VERSIONS)) {
    const peer = pkg.peerDependencies[name]!;
    const lo = /^>=(\S+)/.exec(tested)![1]!;
    assert.ok(inTestedRange(lo, peer), `${name}: tested ${tested} starts inside the peer range ${peer}`);
  }
});

test('mayPatch: outside the tested set no, unless FORKWATCH_ALLOW_UNTESTED_MCP_SDK', () => {
  assert.equal(mayPatch('@modelcontextprotocol/sdk', '1.32.2', {}), true);
  assert.equal(mayPatch('@modelcontextprotocol/sdk', '1.28.0', {}), false);
  assert.equal(mayPatch('@modelcontextprotocol/sdk', '1.28.0', { FORKWATCH_ALLOW_UNTESTED_MCP_SDK: '1' }), true);
});

test('missingPeers names what does not resolve; the line says what to run', () => {
  const req = { resolve: (id: string) => (id === '@opentelemetry/api' ? '/x' : (() => { throw new Error('nope'); })()) };
  const missing = missingPeers(req);
  assert.deepEqual(missing, ['@opentelemetry/instrumentation', '@opentelemetry/sdk-node']);
  assert.match(missingPeersLine(missing), /^forkwatch: @opentelemetry\/instrumentation, @opentelemetry\/sdk-node are not installed .*uninstrumented.*npm install @opentelemetry\/api @opentelemetry\/instrumentation @opentelemetry\/sdk-node$/);
});
