import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasBinary, loadYaml, readRepoFile, repoHas, run, yamlUnavailable } from './ops-files.js';

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string | null>;
  volumes?: string[];
  expose?: string[];
  ports?: string[];
}
interface ComposeFile {
  services: Record<string, ComposeService>;
}

const NO_YAML = yamlUnavailable();
const YAML_SKIP = NO_YAML ?? false;

test('docker-compose config -q accepts docker-compose.yml', { timeout: 30_000 }, (t) => {
  if (!hasBinary('docker-compose')) {
    t.skip('docker-compose not found: install docker-compose (bash scripts/install-test-deps.sh does) to validate docker-compose.yml');
    return;
  }
  const r = run('docker-compose', ['-f', 'docker-compose.yml', 'config', '-q']);
  assert.equal(r.status, 0, r.output);
});

function compose(): ComposeFile {
  return loadYaml('docker-compose.yml') as ComposeFile;
}

/** Ports a compose service listens on inside the network: `expose` plus the container side of `ports`. */
function listenPorts(svc: ComposeService): Set<string> {
  const ports = new Set<string>((svc.expose ?? []).map(String));
  for (const p of svc.ports ?? []) ports.add(String(p).split(':').pop()!.split('/')[0]!);
  return ports;
}

test('every file or folder docker-compose bind-mounts exists', { skip: YAML_SKIP, timeout: 30_000 }, () => {
  const mounts: string[] = [];
  for (const [name, svc] of Object.entries(compose().services)) {
    for (const v of svc.volumes ?? []) {
      const src = v.split(':')[0]!;
      if (src.startsWith('./') || src.startsWith('../')) mounts.push(`${name}: ${src}`);
    }
  }
  assert.ok(mounts.length >= 6, `expected the stack's config mounts, got ${mounts.join(', ')}`);
  const missing = mounts.filter((m) => !repoHas(m.split(': ')[1]!));
  assert.deepEqual(missing, []);
});

test('the stack has the services the deployment docs describe', { skip: YAML_SKIP, timeout: 30_000 }, () => {
  const services = compose().services;
  for (const s of ['gateway', 'detector-1', 'detector-2', 'prometheus', 'alertmanager', 'grafana', 'mcp-load', 'webhook-sink']) {
    assert.ok(services[s], `service ${s} missing`);
  }
  assert.deepEqual(services['mcp-load']!.command, ['demo', '--otlp-endpoint', 'http://gateway:4318', '--scenario', 'all', '--loop']);
  // Each detector keeps its own SQLite volume: two replicas must never share a database file.
  const vol1 = services['detector-1']!.volumes!.find((v) => v.endsWith(':/data'));
  const vol2 = services['detector-2']!.volumes!.find((v) => v.endsWith(':/data'));
  assert.ok(vol1 && vol2 && vol1 !== vol2, `detector volumes: ${vol1} ${vol2}`);
  // No relay tier: the gateway's load_balancing exporter speaks OTLP/gRPC to the replicas themselves.
  assert.deepEqual(Object.keys(services).filter((s) => /relay/.test(s)), []);
  assert.equal(services.gateway!.environment!.FORKWATCH_DETECTORS, '[detector-1:4317, detector-2:4317]');
  for (const [d, peer] of [['detector-1', 'detector-2'], ['detector-2', 'detector-1']] as const) {
    const cmd = services[d]!.command as string[];
    assert.equal(cmd[cmd.indexOf('--otlp-grpc-port') + 1], '4317', `${d} listens for the gateway on 4317`);
    assert.equal(services[d]!.environment!.FORKWATCH_PEERS, `http://${peer}:9464`, `${d} answers for its peer too`);
  }
});

const LOCAL_HOSTS = new Set(['0.0.0.0', '127.0.0.1', 'localhost']);

/** host:port pairs in a text, comments stripped; hosts must start with a letter. */
function hostPorts(text: string): Array<[string, string]> {
  const noComments = text
    .split('\n')
    .map((l) => l.replace(/(^|\s)#.*$/, ''))
    .join('\n');
  const out: Array<[string, string]> = [];
  for (const m of noComments.matchAll(/(?<![\w.-])([a-z][a-z0-9.-]*):(\d{2,5})\b/g)) out.push([m[1]!, m[2]!]);
  return out;
}

test('every host:port in the collector, alerting and datasource configs is a compose service port', { skip: YAML_SKIP, timeout: 30_000 }, () => {
  const c = compose();
  const texts: Array<[string, string]> = [
    'collector/prometheus/prometheus.yml',
    'collector/otel/gateway.yaml',
    'collector/alertmanager/alertmanager.yml',
    'dashboards/provisioning/datasources/forkwatch.yml',
    'dashboards/forkwatch-session.json',
  ].map((f) => [f, readRepoFile(f)]);
  // Addresses handed to services through compose itself (the gateway's replicas, the demo's endpoint).
  for (const [name, svc] of Object.entries(c.services)) {
    texts.push([`docker-compose.yml ${name}`, JSON.stringify([svc.environment ?? {}, svc.command ?? []])]);
  }
  let checked = 0;
  const problems: string[] = [];
  for (const [file, text] of texts) {
    for (const [host, port] of hostPorts(text)) {
      if (LOCAL_HOSTS.has(host)) continue;
      checked++;
      const svc = c.services[host];
      if (!svc) problems.push(`${file}: ${host}:${port} is not a compose service`);
      else if (!listenPorts(svc).has(port)) problems.push(`${file}: ${host} does not listen on ${port} (listens on ${[...listenPorts(svc)].join(', ')})`);
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(checked >= 15, `only ${checked} addresses found: the scan is not seeing the configs`);
});

test('the host:port scan flags an unknown host and a wrong port', () => {
  // Guards the test above against passing vacuously.
  assert.deepEqual(hostPorts('url: http://detector-3:9464 # http://commented:1\n  - relay-1:4317'), [
    ['detector-3', '9464'],
    ['relay-1', '4317'],
  ]);
});

test('Dockerfile builds on node:24-bookworm-slim (the primary runtime) with npm ci and runs the package bin as forkwatch', () => {
  const df = readRepoFile('Dockerfile');
  const pkg = JSON.parse(readRepoFile('package.json')) as { bin: Record<string, string> };
  assert.match(df, /^FROM node:24-bookworm-slim AS build$/m);
  assert.match(df, /^COPY packages\/instrumentation\/package\.json /m, 'the workspace package is known to npm ci');
  assert.match(df, /^RUN npm ci$/m);
  assert.match(df, /python3 make g\+\+/, 'build tools for better-sqlite3');
  assert.match(df, /^ENTRYPOINT \["forkwatch"\]$/m);
  const bin = pkg.bin.forkwatch!.replace(/^\.\//, '');
  assert.ok(df.includes(`/app/${bin}`), `the wrapper must exec the package bin /app/${bin}`);
  // The build context must keep the sources the build needs.
  const ignored = readRepoFile('.dockerignore').split('\n').map((l) => l.trim());
  for (const needed of ['src', 'packages', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.base.json', 'docs']) assert.ok(!ignored.includes(needed), `.dockerignore drops ${needed}`);
});
