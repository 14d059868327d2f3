import { loadConfig } from '../config/load-config.js';
import { createError } from '../errors.js';
import { createJsonLogger, type LogLevel } from '../service/json-logger.js';
import { startDetector } from '../service/detector.js';

/**
 * `forkwatch serve`: runs until SIGTERM/SIGINT, then drains (stop accepting, finish the batches
 * in hand, flush SQLite) and resolves 0; 1 when the drain could not commit everything in time.
 */
export async function runServe(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { config, positionals, warnings } = loadConfig({ argv, env });
  if (positionals.length > 0) throw createError('FORKWATCH_ERR_CLI_USAGE', `serve takes no arguments, got ${JSON.stringify(positionals[0])}`);
  const logger = createJsonLogger(config.logLevel as LogLevel);
  for (const w of warnings) logger.warn(w);
  const detector = await startDetector(config, logger);
  process.stdout.write(`forkwatch listening otlp=${detector.otlpUrl} http=${detector.httpUrl}\n`);
  return new Promise<number>((resolve) => {
    const stop = (signal: string): void => {
      logger.info('draining', { signal });
      const timer = setTimeout(() => {
        logger.error('drain timed out', { drainTimeoutMs: config.drainTimeoutMs });
        resolve(1);
      }, config.drainTimeoutMs);
      timer.unref();
      detector.close().then(
        (ok) => {
          clearTimeout(timer);
          resolve(ok ? 0 : 1);
        },
        (err: unknown) => {
          clearTimeout(timer);
          logger.error('drain failed', err);
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
