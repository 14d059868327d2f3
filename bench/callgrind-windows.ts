/**
 * Runs a bench child under valgrind's callgrind with counting off, and switches it on and off
 * around the windows the child announces (`WINDOW_START n` / `WINDOW_END n` on stdout, answered
 * `go` on stdin once the counter is switched: bench/window-gate.ts is the child's side). Each
 * window is dumped (and the counters zeroed) to a file of its own, `OUT.1`, `OUT.2`, ...
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Runs `node NODE_ARGS SCRIPT` under callgrind writing to `out`; resolves to the child's output
 * and the windows' dumps once it printed RUN_OK and exited, rejects with its last output otherwise.
 */
export async function callgrindWindows(opts: { script: string; nodeArgs: string[]; env: NodeJS.ProcessEnv; out: string; label: string; windows: number }): Promise<{ log: string; dumps: string[] }> {
  const { out } = opts;
  const log = await new Promise<string>((resolve, reject) => {
    const child = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`, process.execPath, ...opts.nodeArgs, opts.script], {
      env: opts.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let log = '';
    let pending = '';
    let steps = Promise.resolve();
    const control = (...args: string[]): Promise<unknown> => run('callgrind_control', [...args, String(child.pid)]);
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      const text = d.toString();
      log += text;
      pending += text;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        // Counting is switched on before the window's first call and off after its last.
        if (line.startsWith('WINDOW_START')) steps = steps.then(() => control('-i', 'on')).then(() => void child.stdin.write('go\n'));
        else if (line.startsWith('WINDOW_END')) steps = steps.then(() => control('-i', 'off')).then(() => control('-d')).then(() => void child.stdin.write('go\n'));
        steps = steps.catch((err: unknown) => {
          child.kill();
          reject(err as Error);
        });
      }
    });
    child.on('error', reject);
    child.on('close', () => {
      if (!log.includes('RUN_OK')) reject(new Error(`valgrind run of ${opts.label} failed:\n${log.slice(-2000)}`));
      else resolve(log);
    });
  });
  return { log, dumps: Array.from({ length: opts.windows }, (_, i) => readFileSync(`${out}.${i + 1}`, 'utf8')) };
}

/** The `totals:` line of each callgrind dump. */
export function dumpTotals(dumps: string[], out: string): number[] {
  return dumps.map((text, i) => {
    const m = /^totals:\s+(\d+)/m.exec(text);
    if (!m) throw new Error(`no totals in callgrind dump ${out}.${i + 1}`);
    return Number(m[1]);
  });
}
