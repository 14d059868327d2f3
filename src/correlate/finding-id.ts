import { createHash } from 'node:crypto';
import type { FindingKind } from '../model/finding.js';

/**
 * Stable finding id: the first 16 hex chars of SHA-256 over kind, session key and what
 * identifies the fork (NUL-separated), so re-detection after a restart or from the other side's
 * spans yields the same id.
 */
export function findingId(kind: FindingKind, sessionKey: string, identity: string): string {
  return createHash('sha256').update(`${kind}\u0000${sessionKey}\u0000${identity}`).digest('hex').slice(0, 16);
}
