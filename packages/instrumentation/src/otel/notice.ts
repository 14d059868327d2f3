import { diag } from '@opentelemetry/api';

const said = new Set<string>();

/**
 * Writes one `forkwatch: ...` line to stderr, once per `key` for the process, and to OpenTelemetry's
 * diag channel. For what a user must see even with diag logging off (an SDK left uninstrumented, a
 * provider joined): never silent, never repeated, never on stdout.
 */
export function notice(key: string, message: string): void {
  if (said.has(key)) return;
  said.add(key);
  try {
    process.stderr.write(`forkwatch: ${message}\n`);
    diag.warn(`forkwatch: ${message}`);
  } catch {
    // A closed stderr must not break the app.
  }
}
