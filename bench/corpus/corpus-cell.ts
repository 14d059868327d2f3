/** Which servers a corpus cell runs against. */
export type CorpusServer =
  /** The demo's rehydrating SDK server (mints a replacement for an unknown session id). */
  | 'naive'
  /** The demo's guarded SDK server (unknown session: 404; incarnations). */
  | 'guarded'
  /** test/fixtures/python/seed_server.py: `mcp` from PyPI, answers an unknown session 404. */
  | 'python'
  /** The same with `--naive`: rehydrates unknown sessions. */
  | 'python-naive'
  /** The Python seed server on forkwatch_instrumentation's GuardedSessionManager (404, 409, incarnations; bench/corpus/python_inprocess_server.py). */
  | 'python-guarded'
  /** `@modelcontextprotocol/server-everything` (npm), streamable HTTP. */
  | 'everything'
  /** bench/corpus/stateless-servers.ts: no session, no resume (SDK 1.x `sessionIdGenerator: undefined`, 2.x `createMcpHandler`). */
  | 'stateless';

/**
 * The app's client: the stock SDK client (with the app's naive dedup), the same instrumented, or
 * `connectGuarded` (instrumented); or the Python `mcp` SDK's `ClientSession` in its own process
 * (bench/corpus/python_client.py), instrumented with forkwatch_instrumentation's
 * `ClientInstrumentation` with the app's naive dedup (`python-instrumented`), or through its
 * `connect_guarded` (`python-guarded`, no app dedup).
 */
export type CorpusClient = 'stock' | 'instrumented' | 'guarded' | 'python-instrumented' | 'python-guarded';

/** The clients bench/corpus/python_client.py plays. */
export const PYTHON_CLIENTS: readonly CorpusClient[] = ['python-instrumented', 'python-guarded'];

/** The fault the run injects. */
export type CorpusFault =
  /** The stream is cut mid-call and the network stays down until the server reaped the session. */
  | 'cut-reap'
  /** The stream is cut and the client resumes while the session lives. */
  | 'cut-healthy'
  /** No partition: a call, the session idles until reaped, a call on the old session id. */
  | 'idle-reaped'
  /** No partition: the app aborts its call after the first progress notification. */
  | 'app-cancel'
  /** No partition: a long call answered, then the client ends the session (`DELETE`). */
  | 'delete-after-call'
  /** Stateless: the call's POST SSE stream is cut mid-call, no retry. */
  | 'cut'
  /** Stateless: the same cut, then the app re-issues the call and gets its answer. */
  | 'cut-retry'
  /** Stateless: one call answered, nothing injected. */
  | 'healthy'
  /** The healthy cut against a server whose event log evicted the client's cursor: the resume is answered 409 (restart-faults.ts). */
  | 'reject-409'
  /** The server restarted mid-call: the resume meets a server that never knew the session (restart-scenario.ts). */
  | 'server-restart'
  /** As `server-restart`, but connections are refused while the server is down until the client's reconnects are spent. */
  | 'refused-restart';

/** Faults played by the scripted session (bench/corpus/script-scenario.ts) rather than the seed's partition. */
export const SCRIPT_FAULTS: readonly CorpusFault[] = ['idle-reaped', 'app-cancel', 'delete-after-call'];

/** Faults a stateless path plays (bench/corpus/stateless-scenario.ts); `app-cancel` is played there too. */
export const STATELESS_FAULTS: readonly CorpusFault[] = ['cut', 'cut-retry', 'app-cancel', 'healthy'];

/** One way forkwatch sees a server: in-process instrumentation of an SDK, or the sidecar proxy. */
export interface CorpusPath {
  /** Table row name, e.g. `sdk-1.x`, `proxy --guard/python`. */
  name: string;
  /** In-process: the server is instrumented with forkwatch in the app. Proxy: uninstrumented behind `forkwatch proxy`. */
  via: 'in-process' | 'proxy' | 'proxy --guard';
  /** The MCP SDK line of the demo server and client. */
  sdk: '1.x' | '2.x';
  servers: CorpusServer[];
  /** A stateless server (no session): played with STATELESS_FAULTS only. */
  stateless?: true;
}

/** One scenario run of the corpus: a path, a server, a client, a fault and a seed. */
export interface CorpusCell {
  path: CorpusPath;
  server: CorpusServer;
  client: CorpusClient;
  fault: CorpusFault;
  seed: number;
  /** Unique per run, used as the `service.name` prefix of everything the run exports. */
  id: string;
}

/** `path server client fault #seed`: how the table and the mismatch list name a cell. */
export function cellName(c: CorpusCell): string {
  return `${c.path.name} ${c.server}/${c.client} ${c.fault} #${c.seed}`;
}
