import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasBinary, run } from './ops-files.js';

const SKIP = hasBinary('amtool') ? false : 'amtool not found: bash scripts/install-test-deps.sh (or Debian: apt-get install prometheus-alertmanager) to run this test';
const CONFIG = 'collector/alertmanager/alertmanager.yml';

test('amtool check-config accepts alertmanager.yml', { skip: SKIP, timeout: 30_000 }, () => {
  const r = run('amtool', ['check-config', CONFIG]);
  assert.equal(r.status, 0, r.output);
  assert.match(r.output, /1 inhibit rules/);
});

for (const [labels, receiver] of [
  [['severity=page', 'service=tools', 'alertname=MCPSessionForkDetected'], 'page'],
  [['severity=page', 'alertname=ForkwatchDown', 'instance=detector-1:9464'], 'page'],
  [['severity=ticket', 'service=tools', 'alertname=MCPResumeRejectionRateHigh'], 'ticket'],
] as const) {
  test(`${labels.join(',')} routes to the ${receiver} receiver`, { skip: SKIP, timeout: 30_000 }, () => {
    const r = run('amtool', ['config', 'routes', 'test', `--config.file=${CONFIG}`, `--verify.receivers=${receiver}`, ...labels]);
    assert.equal(r.status, 0, r.output);
  });
}
