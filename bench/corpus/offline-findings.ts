import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Finding } from '../../src/model/finding.js';
import { CLI } from '../../test/e2e/helpers/detector.js';

/**
 * Runs the real `forkwatch analyze --json` (the built CLI, its own process) over a capture (OTLP
 * JSON lines) and returns its findings. Throws when it cannot decode the capture or fails.
 */
export async function analyzeCapture(lines: readonly string[]): Promise<Finding[]> {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-corpus-'));
  const file = join(dir, 'capture.jsonl');
  try {
    writeFileSync(file, `${lines.join('\n')}\n`);
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    for (const k of Object.keys(env)) if (k.startsWith('FORKWATCH_')) delete env[k];
    const child = spawn(process.execPath, [CLI, 'analyze', '--json', file], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    // Exit 1 means "found something"; 2 undecodable lines or usage.
    if (code !== 0 && code !== 1) throw new Error(`forkwatch analyze exited ${code}: ${err}`);
    return (JSON.parse(out) as { findings: Finding[] }).findings;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
