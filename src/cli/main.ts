import { ForkwatchError } from '../errors.js';
import { describeSettings } from '../config/load-config.js';

import { createRequire } from 'node:module';

/** The package's version, read once from its package.json (dist/cli and src/cli are both two levels down). */
const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

const USAGE = `forkwatch ${VERSION}: session-fork detector for MCP fleets (Streamable HTTP)

Usage:
  forkwatch serve   [flags]           run the detector (OTLP/HTTP in, findings, /metrics, API)
  forkwatch demo    [demo flags]      watch the seed fork happen against a naive server, and not
                                      against a guarded one (starts everything it needs)
  forkwatch analyze [--json] FILE...  offline forensics over OTLP JSON exports (one
                                      ExportTraceServiceRequest per line); exit 1 if findings;
                                      --json prints one JSON object: {spans, badLines,
                                      findings} (findings in the API's shape)
  forkwatch proxy --upstream URL      sidecar reverse proxy in front of any MCP server: emits
                                      the server-side spans from the wire; --guard enforces
                                      the resume decision boundary ('forkwatch proxy --help')
  forkwatch help | --help | --version

Exit status: 0 ok, 1 findings (analyze) or runtime failure, 2 bad usage or configuration.
Run 'forkwatch serve --help' for the detector's flags and environment variables.`;

export const SERVE_USAGE = `forkwatch serve [flags]

Flags override environment variables, which override defaults.
  flag                           environment variable                 default
${describeSettings().join('\n')}

FORKWATCH_SESSION_SALT is read by the instrumentation, not the detector.
SIGTERM/SIGINT drain: stop accepting, finish the batches in hand, flush SQLite, exit 0.`;

/** Runs the CLI; resolves to the process exit status. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(`${USAGE}\n`);
        return command === undefined ? 2 : 0;
      case '--version':
      case 'version':
        process.stdout.write(`${VERSION}\n`);
        return 0;
      case 'serve':
        if (rest.includes('--help') || rest.includes('-h')) {
          process.stdout.write(`${SERVE_USAGE}\n`);
          return 0;
        }
        // Each command loads its own modules: a `forkwatch proxy` sidecar never holds the
        // detector's (fastify, SQLite, the engine) in memory, nor pays for compiling them.
        return await (await import('./serve.js')).runServe(rest, process.env);
      case 'demo':
        return await (await import('./demo.js')).runDemo(rest);
      case 'analyze':
        return await (await import('./analyze.js')).runAnalyze(rest);
      case 'proxy': {
        const { PROXY_USAGE, runProxy } = await import('./proxy.js');
        if (rest.includes('--help') || rest.includes('-h')) {
          process.stdout.write(`${PROXY_USAGE}\n`);
          return 0;
        }
        return await runProxy(rest, process.env);
      }
      default:
        process.stderr.write(`forkwatch: unknown command ${JSON.stringify(command)} (try forkwatch --help)\n`);
        return 2;
    }
  } catch (err) {
    if (err instanceof ForkwatchError && (err.code === 'FORKWATCH_ERR_CONFIG_INVALID' || err.code === 'FORKWATCH_ERR_CLI_USAGE')) {
      process.stderr.write(`forkwatch: ${err.message}\n`);
      return 2;
    }
    // A coded error says what to do in one line; a stack is for what nobody foresaw.
    if (err instanceof ForkwatchError) {
      process.stderr.write(`forkwatch: ${err.code}: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`forkwatch: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  }
}
