import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, envName, flagName } from '../../src/config/load-config.js';
import { DEFAULT_CONFIG } from '../../src/config/defaults.js';
import { ForkwatchError } from '../../src/errors.js';

test('defaults apply when nothing is given', () => {
  const { config } = loadConfig({});
  assert.deepEqual(config, DEFAULT_CONFIG);
  assert.equal(config.otlpPort, 4318);
  assert.equal(config.httpPort, 9464);
});

test('flags override env override defaults', () => {
  const { config, positionals } = loadConfig({
    env: { FORKWATCH_OTLP_PORT: '5000', FORKWATCH_HTTP_PORT: '6000', FORKWATCH_SESSION_SALT: 'ignored-here' },
    argv: ['serve', '--otlp-port', '7000', '--db=:memory:', '--metrics-auth'],
  });
  assert.equal(config.otlpPort, 7000);
  assert.equal(config.httpPort, 6000);
  assert.equal(config.db, ':memory:');
  assert.equal(config.metricsAuth, true);
  assert.deepEqual(positionals, ['serve']);
});

test('every problem is reported together', () => {
  assert.throws(
    () => loadConfig({ env: { FORKWATCH_HTTP_PORT: 'abc' }, argv: ['--nope', '--otlp-port', '70000', '--log-level', 'loud', '--db'] }),
    (err: unknown) => {
      assert.ok(err instanceof ForkwatchError);
      assert.equal(err.code, 'FORKWATCH_ERR_CONFIG_INVALID');
      for (const part of ['FORKWATCH_HTTP_PORT', '--nope', '--otlp-port', 'loud', '--db needs a value']) {
        assert.match(err.message, new RegExp(part));
      }
      return true;
    },
  );
});

test('unknown FORKWATCH_* variables are warnings, not fatal (other tools share the prefix); unknown flags stay fatal', () => {
  const { config, warnings } = loadConfig({ env: { FORKWATCH_OTLP_PORTT: '1', FORKWATCH_PROXY_THING: 'x', FORKWATCH_HTTP_PORT: '6001' } });
  assert.equal(config.httpPort, 6001);
  assert.equal(config.otlpPort, DEFAULT_CONFIG.otlpPort);
  assert.equal(warnings.length, 2);
  assert.match(warnings.join('\n'), /FORKWATCH_OTLP_PORTT/);
  assert.match(warnings.join('\n'), /FORKWATCH_PROXY_THING/);
  assert.throws(() => loadConfig({ argv: ['--otlp-portt', '1'] }), /unknown flag --otlp-portt/);
});

test('programmatic overrides reject unknown keys', () => {
  assert.throws(() => loadConfig({ overrides: { otlpPortt: 1 } }), /unknown option otlpPortt/);
});

test('names are derived consistently', () => {
  assert.equal(flagName('maxBodyBytes'), 'max-body-bytes');
  assert.equal(envName('maxBodyBytes'), 'FORKWATCH_MAX_BODY_BYTES');
  assert.equal(envName('authToken'), 'FORKWATCH_AUTH_TOKEN');
  assert.equal(envName('db'), 'FORKWATCH_DB');
});
