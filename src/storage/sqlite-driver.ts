import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * better-sqlite3 for the running Node: 12 (compiled here, the last to run on Node 20) below Node
 * 22; 13 (Node-API, shipped prebuilt, installed under the alias `better-sqlite3-napi`) from 22 on.
 * better-sqlite3 12 on Node 24 aborts the process when V8 collects a Statement outside a Node
 * environment scope (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook), and
 * 13 segfaults on Node 20: neither version serves both.
 */
export function loadSqlite(nodeVersion = process.versions.node): typeof BetterSqlite3 {
  const major = Number(nodeVersion.split('.')[0]);
  const require = createRequire(import.meta.url);
  return require(major >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3') as typeof BetterSqlite3;
}
