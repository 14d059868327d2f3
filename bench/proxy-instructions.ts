/**
 * `npm run bench -- proxy-instructions`: what `forkwatch proxy` adds to a tool call in CPU
 * instructions, counted by valgrind (cachegrind, no cache simulation) rather than timed, so the
 * figure does not move with the load of a shared machine. Same calls as bench/proxy.ts (a POST
 * answered by 4 id-bearing SSE events, one session, concurrency 8), whole process (client, proxy
 * and upstream); per call = (LONG-call run - SHORT-call run) / (LONG - SHORT). Needs valgrind.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SHORT = 100;
const LONG = 300;
export const PROXY_INSTRUCTION_VARIANTS = ['direct', 'bare', 'forkwatch', 'guard'] as const;
export type ProxyInstructionVariant = (typeof PROXY_INSTRUCTION_VARIANTS)[number];

function count(variant: ProxyInstructionVariant, calls: number): Promise<number> {
  const script = fileURLToPath(new URL('./proxy-one-variant.js', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn('valgrind', ['--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null', process.execPath, '--single-threaded', script], {
      env: { ...process.env, VARIANT: variant, N: String(calls) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', () => {
      const m = /I\s+refs:\s+([\d,]+)/.exec(out);
      if (!out.includes('RUN_OK') || !m) reject(new Error(`valgrind run of proxy/${variant} x${calls} failed:\n${out.slice(-2000)}`));
      else resolve(Number(m[1]!.replace(/,/g, '')));
    });
  });
}

/** Instructions per call of each variant; two valgrind runs at a time (the machine has two cores). */
export async function benchProxyInstructions(): Promise<Array<{ variant: ProxyInstructionVariant; perCall: number }>> {
  const rows: Array<{ variant: ProxyInstructionVariant; perCall: number }> = [];
  for (const variant of PROXY_INSTRUCTION_VARIANTS) {
    const [short, long] = await Promise.all([count(variant, SHORT), count(variant, LONG)]);
    rows.push({ variant, perCall: (long - short) / (LONG - SHORT) });
  }
  return rows;
}
