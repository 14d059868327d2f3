import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { runSeedScenario } from '/work/wt/proxy/src/demo/seed-scenario.js';
import { createForkwatchProxy } from '/work/wt/proxy/src/proxy/index.js';
const server = process.argv[2] as 'naive' | 'guarded';
const client = process.argv[3] as 'stock' | 'guarded';
const guard = process.argv[4] === 'guard';
const healthy = process.argv[5] === 'healthy';
const exp = new InMemorySpanExporter();
const tp = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exp)] });
const r = await runSeedScenario({ server, client, healthy, requestTimeoutMs: 1500,
  inFrontOfServer: async (url) => { const p = await createForkwatchProxy({ upstream: url, port: 0, host: '127.0.0.1', guard, tracerProvider: tp, guardHoldMs: 300 }); return { port: p.port, what: 'fw proxy', close: async () => { console.log(JSON.stringify(p.stats())); await p.close(); } }; } });
for (const s of r.steps) console.log(s.atMs, s.what);
console.log('calls', JSON.stringify(r.calls.map(c => [c.attempt, c.outcome, c.durationMs, c.error?.message])));
for (const s of exp.getFinishedSpans()) {
  const a = s.attributes;
  console.log(s.name, a['forkwatch.session.key']?.toString().slice(0,6), a['forkwatch.session.incarnation'], a['forkwatch.session.created_by'] ?? '', a['forkwatch.sse.event.id'] ?? '', a['forkwatch.sse.event.seq'] ?? '', a['forkwatch.resume.outcome'] ?? '', a['http.response.status_code'] ?? '', a['mcp.method.name'] ?? '', a['jsonrpc.request.id'] ?? '');
}
