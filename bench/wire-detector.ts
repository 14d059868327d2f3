/**
 * The detector of the wire benchmark as a process of its own (its CPU is measured apart from the
 * exporters'): the same assembly as `forkwatch serve`, flags as its. Prints one JSON line with
 * its addresses; SIGTERM drains and exits.
 */
import { loadConfig } from '../src/config/load-config.js';
import { startDetector } from '../src/service/detector.js';
import { createJsonLogger } from '../src/service/json-logger.js';

const { config } = loadConfig({ argv: process.argv.slice(2), env: {} });
const d = await startDetector(config, createJsonLogger('error'));
process.stdout.write(`${JSON.stringify({ otlpUrl: d.otlpUrl, httpUrl: d.httpUrl, grpc: d.otlpGrpcAddress })}\n`);
process.once('SIGTERM', () => void d.close().then(() => process.exit(0)));
