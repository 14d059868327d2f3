/** The OpenTelemetry peers `/register` needs; it imports none of them before checking they resolve. */
export const REGISTER_PEERS = ['@opentelemetry/api', '@opentelemetry/instrumentation', '@opentelemetry/sdk-node'] as const;

/** The peers of {@link REGISTER_PEERS} that `req` (a require from this package's location) cannot resolve. */
export function missingPeers(req: { resolve(id: string): string }): string[] {
  const missing: string[] = [];
  for (const name of REGISTER_PEERS) {
    try {
      req.resolve(name);
    } catch {
      missing.push(name);
    }
  }
  return missing;
}

/** The one line `/register` writes when peers are missing: what is missing, what happens, the command that fixes it. */
export function missingPeersLine(missing: readonly string[]): string {
  return (
    `forkwatch: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not installed (OpenTelemetry peers @forkwatch/instrumentation/register needs): ` +
    `the app runs uninstrumented. Fix: npm install ${REGISTER_PEERS.join(' ')}`
  );
}
