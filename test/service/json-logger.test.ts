import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJsonLogger } from '../../src/service/json-logger.js';

test('one JSON object per line with level name, ISO time, message and fields; below the level nothing', () => {
  const lines: string[] = [];
  const log = createJsonLogger('info', (l) => lines.push(l));
  log.debug('hidden');
  log.info('draining', { signal: 'SIGTERM' });
  const err = Object.assign(new Error('disk full'), { code: 'FORKWATCH_ERR_STORAGE' });
  log.error('commit failed', err, 42);
  assert.equal(lines.length, 2);
  for (const l of lines) assert.ok(l.endsWith('\n'));
  const [a, b] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(a!.level, 'info');
  assert.equal(a!.msg, 'draining');
  assert.equal(a!.signal, 'SIGTERM');
  assert.match(String(a!.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(b!.level, 'error');
  assert.deepEqual(b!.err, { message: 'disk full', code: 'FORKWATCH_ERR_STORAGE' });
  assert.equal(b!.detail, 42);
});

test('a throwing sink never throws into the detector', () => {
  const log = createJsonLogger('debug', () => {
    throw new Error('EPIPE');
  });
  assert.doesNotThrow(() => log.warn('x'));
});
