import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const APP = fileURLToPath(new URL('../fixtures/zero-code/semconv-app.mjs', import.meta.url));
const NODESDK_SETUP = fileURLToPath(new URL('../fixtures/zero-code/nodesdk-semconv-setup.mjs', import.meta.url));

interface OtlpSpan {
  name: string;
  kind: number;
  spanId: string;
  parentSpanId?: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}
interface OtlpMetric {
  name: string;
  unit?: string;
  histogram?: { dataPoints: Array<{ count: string | number; explicitBounds: number[]; attributes: Array<{ key: string; value: Record<string, unknown> }> }> };
}

/** A real OTLP/HTTP JSON receiver on 127.0.0.1:0: what the app's NodeSDK exports to. */
async function otlpReceiver(): Promise<{ url: string; spans: OtlpSpan[]; metrics: OtlpMetric[]; close: () => Promise<void> }> {
  const spans: OtlpSpan[] = [];
  const metrics: OtlpMetric[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      try {
        const json = JSON.parse(body);
        if (req.url === '/v1/traces') for (const rs of json.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...ss.spans);
        if (req.url === '/v1/metrics') for (const rm of json.resourceMetrics ?? []) for (const sm of rm.scopeMetrics ?? []) metrics.push(...sm.metrics);
      } catch {
        // Not JSON: the test's assertions report what is missing.
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    metrics,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function runApp(importWhat: string, endpoint: string, extraEnv: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_OPTIONS: '',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'semconv-app',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_METRICS_EXPORTER: 'otlp',
    OTEL_LOGS_EXPORTER: 'none',
    FORKWATCH_SESSION_SALT: 'semconv-salt',
    ...extraEnv,
  };
  const child = spawn(process.execPath, ['--import', importWhat, APP], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, out });
    }),
  );
}

const attr = (s: { attributes: OtlpSpan['attributes'] }, k: string): unknown => {
  const v = s.attributes.find((a) => a.key === k)?.value;
  return v === undefined ? undefined : Object.values(v)[0];
};

for (const [way, importWhat, env] of [
  ['zero code: --import @forkwatch/instrumentation/register with FORKWATCH_MCP_SEMCONV=1', '@forkwatch/instrumentation/register', { FORKWATCH_MCP_SEMCONV: '1' }],
  ['NodeSDK({ instrumentations: [new McpForkInstrumentation({ mcpSemconv: true })] })', NODESDK_SETUP, {}],
] as const) {
  test(`${way}: the app with no forkwatch code exports the MCP conventions' spans and histograms`, { timeout: 90_000 }, async () => {
    const otlp = await otlpReceiver();
    try {
      const run = await runApp(importWhat, otlp.url, env);
      assert.equal(run.code, 0, run.out);
      assert.match(run.out, /"text":"zero code"/, run.out);
      // NodeSDK's shutdown on the way out exported everything; nothing is awaited after exit.
      const client = otlp.spans.find((s) => s.name === 'tools/call echo' && s.kind === 3);
      const server = otlp.spans.find((s) => s.name === 'tools/call echo' && s.kind === 2);
      assert.ok(client && server, `spans: ${otlp.spans.map((s) => `${s.name}/${s.kind}`).join(', ')}\n${run.out}`);
      assert.equal(server.parentSpanId, client.spanId);
      assert.equal(attr(server, 'gen_ai.operation.name'), 'execute_tool');
      assert.equal(attr(server, 'mcp.session.id'), undefined);
      assert.equal(typeof attr(server, 'forkwatch.session.key'), 'string');
      // forkwatch's own spans still flow next to them.
      assert.ok(otlp.spans.some((s) => s.name === 'forkwatch.session.created'));
      for (const name of ['mcp.client.operation.duration', 'mcp.server.operation.duration']) {
        const m = otlp.metrics.find((x) => x.name === name);
        assert.ok(m?.histogram, `${name}: ${otlp.metrics.map((x) => x.name).join(', ')}`);
        assert.equal(m.unit, 's');
        const echo = m.histogram.dataPoints.find((p) => attr(p, 'gen_ai.tool.name') === 'echo');
        assert.ok(echo, name);
        assert.equal(Number(echo.count), 1);
        assert.deepEqual(echo.explicitBounds, [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]);
      }
    } finally {
      await otlp.close();
    }
  });
}

test('zero code without FORKWATCH_MCP_SEMCONV: forkwatch spans only, no conventional spans or histograms', { timeout: 90_000 }, async () => {
  const otlp = await otlpReceiver();
  try {
    const run = await runApp('@forkwatch/instrumentation/register', otlp.url, {});
    assert.equal(run.code, 0, run.out);
    assert.ok(otlp.spans.some((s) => s.name === 'forkwatch.session.created'), run.out);
    assert.deepEqual(otlp.spans.filter((s) => !s.name.startsWith('forkwatch.')).map((s) => s.name), []);
    assert.deepEqual(otlp.metrics.filter((m) => m.name.startsWith('mcp.')).map((m) => m.name), []);
  } finally {
    await otlp.close();
  }
});
