import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { runSeedScenario } from '../../../src/demo/seed-scenario.js';
const server = new InMemorySpanExporter();
const client = new InMemorySpanExporter();
const r = await runSeedScenario({ server: 'naive', client: (process.argv[2] ?? 'stock') as any, requestTimeoutMs: 1500,
  tracerProviders: { server: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(server)] }), client: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(client)] }) } });
for (const s of server.getFinishedSpans()) if (/resume|session/.test(s.name)) console.log(s.name, JSON.stringify(s.attributes));
console.log(r.calls.map(c=>[c.attempt,c.outcome,c.durationMs]));
