/**
 * A real `forkwatch serve` process, spans from the OpenTelemetry SDK's OTLP/protobuf exporter over
 * a real socket, a real SQLite file, kill -9: a healthy session's decision (which reports nothing)
 * is not written, while a decision that counts a resume is; after the kill and a restart on the
 * same file, both sessions are back and nothing is reported twice.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_RESUME_LAST_EVENT_FOUND,
  ATTR_RESUME_LAST_EVENT_ID,
  ATTR_RESUME_OUTCOME,
  ATTR_SCHEMA_VERSION,
  ATTR_SESSION_CREATED_BY,
  ATTR_SESSION_END_REASON,
  ATTR_SESSION_INCARNATION,
  ATTR_SESSION_INCARNATION_SOURCE,
  ATTR_SESSION_KEY,
  ATTR_SIDE,
  SCHEMA_VERSION,
  SPAN_RESUME,
  SPAN_SESSION_CREATED,
  SPAN_SESSION_ENDED,
} from '@forkwatch/instrumentation/semconv';
import { loadSqlite } from '../../src/storage/sqlite-driver.js';
import { startDetector, waitFor, type DetectorProcess } from './helpers/detector.js';

const Database = loadSqlite();
const running: DetectorProcess[] = [];
after(async () => {
  for (const d of running) await d.kill();
});

const SERVICE = 'e2e-decided-restart';
const HEALTHY = 'a1'.repeat(16);
const RESUMED = 'b2'.repeat(16);

async function exportSessions(otlpUrl: string): Promise<void> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': SERVICE }),
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${otlpUrl}/v1/traces` }))],
  });
  const tracer = provider.getTracer('e2e');
  const span = (name: string, key: string, attrs: Record<string, string | number | boolean>): void => {
    tracer.startSpan(name, { attributes: { [ATTR_SCHEMA_VERSION]: SCHEMA_VERSION, [ATTR_SIDE]: 'server', [ATTR_SESSION_KEY]: key, ...attrs } }).end();
  };
  for (const key of [HEALTHY, RESUMED]) {
    span(SPAN_SESSION_CREATED, key, { [ATTR_SESSION_INCARNATION]: `${key.slice(0, 8)}inc00001`, [ATTR_SESSION_INCARNATION_SOURCE]: 'server', [ATTR_SESSION_CREATED_BY]: 'initialize' });
  }
  span(SPAN_RESUME, RESUMED, {
    [ATTR_RESUME_LAST_EVENT_ID]: 'e-5',
    [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200,
    [ATTR_SESSION_INCARNATION]: `${RESUMED.slice(0, 8)}inc00001`,
    [ATTR_RESUME_LAST_EVENT_FOUND]: true,
    [ATTR_RESUME_OUTCOME]: 'resumed',
  });
  span(SPAN_SESSION_ENDED, HEALTHY, { [ATTR_SESSION_INCARNATION]: `${HEALTHY.slice(0, 8)}inc00001`, [ATTR_SESSION_END_REASON]: 'closed' });
  await provider.forceFlush();
  await provider.shutdown();
}

/** Chunks in each session's log (undefined: no stored state), read from the detector's file. */
function logChunks(dbPath: string): Map<string, number> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare<[], { key: string; n: number }>('SELECT s.key AS key, (SELECT count(*) FROM session_log l WHERE l.sid = s.id) AS n FROM session_state s').all();
    return new Map(rows.map((r) => [r.key, r.n]));
  } finally {
    db.close();
  }
}

async function resumesCounted(d: DetectorProcess): Promise<number> {
  const text = await (await fetch(`${d.httpUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`forkwatch_resumes_total{outcome="resumed",service="${SERVICE}"}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('a healthy decision is not written, a resume counted is; after kill -9 both sessions are back and nothing is counted twice', { timeout: 90_000 }, async () => {
  const d = await startDetector({ args: ['--decision-window-ms', '1000', '--tick-interval-ms', '100'] });
  running.push(d);
  await exportSessions(d.otlpUrl);
  // Both became pending in one batch and are decided in one tick; the resume's decision is written
  // (a chunk in its log) in the commit after it, which would hold the healthy one's too.
  await waitFor(async () => (await resumesCounted(d)) === 1 && (logChunks(d.dbPath).get(RESUMED) ?? 0) >= 1, 20_000);
  const chunks = logChunks(d.dbPath);
  assert.equal(chunks.get(HEALTHY), 0, 'the healthy session is stored (written on arrival) and its decision was not written');
  await d.kill();

  const again = await startDetector({ args: ['--decision-window-ms', '1000', '--tick-interval-ms', '100'], dbPath: d.dbPath });
  running.push(again);
  for (const key of [HEALTHY, RESUMED]) {
    const res = await fetch(`${again.httpUrl}/api/v1/sessions/${key}`);
    assert.equal(res.status, 200, `${key} is back after the restart`);
  }
  // Restored sessions whose window elapsed are decided before the detector listens: the healthy
  // one again (to nothing); the resume, saved as counted, is not counted again.
  assert.equal(await resumesCounted(again), 0);
  const items = ((await (await fetch(`${again.httpUrl}/api/v1/findings?service=${SERVICE}`)).json()) as { items: unknown[] }).items;
  assert.deepEqual(items, []);
  await again.stop();
});
