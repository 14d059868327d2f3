import { spawn, type ChildProcess } from 'node:child_process';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { scaledDelays, valgrindSlowdown } from '../../bench/valgrind-delays.js';
import { lateCalls } from '../../bench/instruction-count.js';

describe('instruction bench: wall-clock bounds under valgrind (issue 28)', () => {
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill();
  });
  it('scales requestSpanDelayMs and deliveryTimeoutMs by INSTR_SLOWDOWN (default 100); a bad factor is an error', () => {
    assert.deepEqual(scaledDelays({}), { slowdown: 100, requestSpanDelayMs: 100_000, deliveryTimeoutMs: 200_000 });
    assert.deepEqual(scaledDelays({ INSTR_SLOWDOWN: '250' }), { slowdown: 250, requestSpanDelayMs: 250_000, deliveryTimeoutMs: 500_000 });
    for (const bad of ['0', '-3', '1.5', 'x', '']) assert.throws(() => valgrindSlowdown({ INSTR_SLOWDOWN: bad }), /INSTR_SLOWDOWN/);
  });

  it("reads the child's LATE line, and a child without one is an error", () => {
    assert.deepEqual(lateCalls('x\nLATE {"slowestMs":12,"pastDelay":0,"calls":8}\nRUN_OK\n'), { slowestMs: 12, pastDelay: 0, calls: 8 });
    assert.throws(() => lateCalls('RUN_OK\n'), /no LATE line/);
  });

  // The child as the bench runs it (without valgrind): it counts the calls of its windows against
  // the delay it was given. Delay 0: every call is past it; a long delay: none is.
  for (const [delay, expectPast] of [
    ['0', (calls: number) => calls],
    ['100000', () => 0],
  ] as const) {
    it(`bench/one-variant.ts times its counted calls against REQUEST_SPAN_DELAY_MS=${delay}`, { timeout: 120_000 }, async () => {
      const script = fileURLToPath(new URL('../../bench/one-variant.ts', import.meta.url));
      const child = spawn(process.execPath, ['--conditions=forkwatch-source', '--import', 'tsx', script], {
        env: { ...process.env, VARIANT: 'both', APP: 'echo', WARMUP: '5', WINDOWS: '3,5', REQUEST_SPAN_DELAY_MS: delay, DELIVERY_TIMEOUT_MS: '200000' },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      children.push(child);
      let out = '';
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.stdout.on('data', (d: Buffer) => {
        const text = d.toString();
        out += text;
        // The window gate's handshake: answer each marker as bench/callgrind-windows.ts does.
        for (const line of text.split('\n')) if (line.startsWith('WINDOW_')) child.stdin.write('go\n');
      });
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      assert.equal(code, 0, `child failed:\n${out}\n${err.slice(-2000)}`);
      assert.match(out, /RUN_OK/);
      const late = lateCalls(out);
      assert.equal(late.calls, 8);
      assert.equal(late.pastDelay, expectPast(8));
      assert.ok(late.slowestMs >= 0);
    });
  }
});
