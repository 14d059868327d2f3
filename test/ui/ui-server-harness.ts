import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiServer, type ApiServerOptions } from '../../src/http/api-server.js';
import { openStore } from '../../src/storage/open-store.js';
import type { Store } from '../../src/storage/store.js';

export interface UiServer {
  url: string;
  store: Store;
}

/** The real API server (with the UI plugin) on a loopback port over a real SQLite file. */
export async function startUiServer(t: { after(fn: () => unknown): void }, over: Partial<ApiServerOptions> = {}): Promise<UiServer> {
  const dir = mkdtempSync(join(tmpdir(), 'forkwatch-ui-'));
  const store = openStore({ path: join(dir, 'fw.db') });
  const app = await createApiServer({ store, lineage: () => undefined, ready: () => true, ...over });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(async () => {
    await app.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const addr = app.server.address();
  assert.ok(addr && typeof addr === 'object');
  return { url: `http://127.0.0.1:${addr.port}`, store };
}

export interface Answer {
  status: number;
  body: string;
  headers: Headers;
}

/** One request, redirects not followed. */
export async function request(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(10_000), ...init });
  return { status: res.status, body: await res.text(), headers: res.headers };
}
