import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Registry } from 'prom-client';
import { createMetrics } from '../../src/metrics/create-metrics.js';
import { acceptsOpenMetrics, renderMetrics } from '../../src/metrics/render-metrics.js';
import type { Finding } from '../../src/model/finding.js';
import { hasPromtool, promtoolCheckOpenMetrics, promtoolCheckText, sampleValue } from './scrape-format.js';

const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
const TRACE = 'ab'.repeat(16);

function fork(): Finding {
  return {
    id: 'f1',
    kind: 'minted_on_resume',
    service: 'svc',
    sessionKey: 'sessionkeysessionkeysessionkey00',
    incarnation: 'inc-old',
    newIncarnation: 'inc-new',
    summary: 's',
    evidence: [{ traceId: TRACE, spanId: '1'.repeat(16), side: 'server', timeMs: 1, spanName: 'forkwatch.resume', shows: 's' }],
    firstSeenMs: 1,
    detectedAtMs: 2,
  };
}

test('Accept negotiation: OpenMetrics only when preferred', () => {
  assert.equal(acceptsOpenMetrics(PROMETHEUS_ACCEPT), true);
  assert.equal(acceptsOpenMetrics('application/openmetrics-text'), true);
  assert.equal(acceptsOpenMetrics(undefined), false);
  assert.equal(acceptsOpenMetrics('*/*'), false);
  assert.equal(acceptsOpenMetrics('text/plain'), false);
  assert.equal(acceptsOpenMetrics('text/plain;q=1, application/openmetrics-text;q=0.5'), false);
  assert.equal(acceptsOpenMetrics('application/openmetrics-text;q=0'), false);
  assert.equal(acceptsOpenMetrics('application/openmetrics-text;version=2.0.0'), false);
});

test('OpenMetrics scrape carries exemplars and parses with Prometheus\' OpenMetrics parser', { skip: !hasPromtool && 'promtool not installed' }, async () => {
  const m = createMetrics();
  m.onFinding(fork(), true, { lagMs: 1200 });
  m.onResume('forked', 'svc', TRACE);
  const om = await m.render(PROMETHEUS_ACCEPT);
  assert.match(om.contentType, /^application\/openmetrics-text; version=1\.0\.0/);
  assert.ok(om.body.endsWith('# EOF\n'));
  assert.match(om.body, /^# TYPE forkwatch_forks counter$/m);
  assert.match(om.body, new RegExp(`^forkwatch_forks_total\\{kind="minted_on_resume",service="svc"\\} 1 # \\{trace_id="${TRACE}"\\} 1 \\d+(\\.\\d+)?$`, 'm'));
  assert.match(om.body, new RegExp(`^forkwatch_resumes_total\\{outcome="forked",service="svc"\\} 1 # \\{trace_id="${TRACE}"\\}`, 'm'));
  promtoolCheckOpenMetrics(om.body);
  assert.throws(() => promtoolCheckOpenMetrics(om.body.replace('# EOF\n', '')), 'the check can fail');
});

test('Prometheus text scrape has no exemplars, keeps _total after an OpenMetrics scrape, and lints clean', { skip: !hasPromtool && 'promtool not installed' }, async () => {
  const m = createMetrics();
  m.onFinding(fork(), true);
  await m.render(PROMETHEUS_ACCEPT); // prom-client would rename counters in place here
  const text = await m.render('text/plain;version=0.0.4');
  assert.equal(text.contentType, 'text/plain; version=0.0.4; charset=utf-8');
  assert.doesNotMatch(text.body, /trace_id|# EOF/);
  assert.match(text.body, /^# TYPE forkwatch_forks_total counter$/m);
  assert.equal(sampleValue(text.body, 'forkwatch_forks_total', 'kind="minted_on_resume",service="svc"'), 1);
  promtoolCheckText(text.body);
  assert.throws(() => promtoolCheckText('forkwatch_x{ 1\n'), 'the check can fail');
  // and again OpenMetrics after text, still well-formed
  promtoolCheckOpenMetrics((await m.render('application/openmetrics-text')).body);
});

test('renderMetrics works on a caller-supplied registry and leaves its metrics untouched', async () => {
  const reg = new Registry();
  const c = new Counter({ name: 'x_total', help: 'h', registers: [reg] });
  c.inc(2);
  const om = await renderMetrics(reg, 'application/openmetrics-text');
  assert.match(om.body, /^# TYPE x counter\nx_total 2$/m);
  assert.equal((reg.getSingleMetric('x_total') as unknown as { name: string }).name, 'x_total');
  assert.match(await reg.metrics(), /^x_total 2$/m);
});
