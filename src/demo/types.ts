import type { ToolRun } from './slow-report-tool.js';

/** A session the server created: on initialize (sound) or by rehydrating a client-supplied id (the fork). */
export interface CreatedRecord {
  sessionId: string;
  /** 1 for the first life of this id on this server, 2 after one rehydration, ... */
  life: number;
  by: 'initialize' | 'rehydrate';
  /** JSON-RPC method of the causing POST, or the HTTP method for a GET. */
  method: string;
  lastEventId?: string;
  at: number;
}

export interface ReapedRecord {
  sessionId: string;
  life: number;
  eventsEvicted: number;
  at: number;
}

/** One HTTP request answered on the MCP endpoint. */
export interface AnsweredRecord {
  method: string;
  sessionId?: string;
  lastEventId?: string;
  status: number;
  at: number;
}

/** What a demo server saw, for tests and the demo's report (ms since epoch in `at`). */
export interface DemoServerObservations {
  created: CreatedRecord[];
  reaped: ReapedRecord[];
  answered: AnsweredRecord[];
  runs: ToolRun[];
}

/** A running demo MCP server on 127.0.0.1 (OS-chosen port). */
export interface DemoServer {
  /** `external`: a server process started by the caller (`startServer`). */
  kind: 'naive' | 'guarded' | 'external';
  port: number;
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  observations: DemoServerObservations;
  activeSessions(): number;
  /** Sessions reaped idle so far. */
  reapedCount(): number;
  close(): Promise<void>;
}

/** Which server and client a seed scenario runs. */
export type ScenarioServer = 'naive' | 'guarded';
export type ScenarioClient = 'stock' | 'guarded';

/** Options of `runSeedScenario`. Every timer is a parameter; defaults are multiplied by `scale`. */
export interface SeedScenarioOptions {
  server: ScenarioServer;
  client: ScenarioClient;
  /** Partition shorter than the reap and the reconnect inside the session's life: a true resume. Default false. */
  healthy?: boolean;
  /** Multiplies every default timer below (not the ones given explicitly). Default 1. */
  scale?: number;
  /**
   * Tracer providers of each side. A side with one is instrumented with forkwatch (server:
   * observeTransport + wrapHandler + markEnded, or the guard's instrumentation; client:
   * wrapFetch + attach). Default none: stock parts only.
   */
  tracerProviders?: { server?: import('@opentelemetry/api').TracerProvider; client?: import('@opentelemetry/api').TracerProvider };
  /** FORKWATCH_SESSION_SALT of both sides. Default ''. */
  salt?: string;
  /** Server idle reap, ms. Default 300 (healthy: 1500). */
  reapAfterMs?: number;
  /** Client SDK reconnect backoff (`initialReconnectionDelay`), ms. Default 450. */
  reconnectDelayMs?: number;
  /** Partition once the client has received this many id-bearing SSE events. Default 7 (the seed's e7). */
  partitionAfterEvents?: number;
  /**
   * Shortest partition, ms; in a forking run the network also stays down until the server has
   * reaped the session (reconnects meanwhile are held, then forwarded). Default 400 (healthy: 100).
   */
  partitionMs?: number;
  /** slow_report progress notifications per call. Default 5. */
  steps?: number;
  /** slow_report delay per step, ms. Default 30. */
  stepMs?: number;
  /** Per-call request timeout: how long a hang lasts, ms. Default 1500. */
  requestTimeoutMs?: number;
  /** After the resume is answered, how long the app waits before calling again, ms. Default 50. */
  retryCallDelayMs?: number;
  /**
   * Client instrumentation's `deliveryTimeoutMs`: a wire event that has not reached the SDK by
   * then is reported `dropped`. Default 250 (short, so the spans exist before the run ends).
   */
  deliveryTimeoutMs?: number;
  /** Hard bound on the whole run, ms. Default 8000. */
  maxRunMs?: number;
  /** The tool the app calls, given the call's topic. Default `slow_report` with `{ topic }`. */
  tool?: (topic: string) => { name: string; arguments: Record<string, unknown> };
  /**
   * Starts the server instead of `server`'s demo one (another SDK, another language): it must
   * serve the called tool (`tool`) at `/mcp` and count its reaps. `server` then only labels the run.
   */
  startServer?: (timers: { reapAfterMs: number; steps: number; stepMs: number }) => Promise<DemoServer>;
  /**
   * Starts something between the fault proxy and the server (the forkwatch sidecar proxy):
   * given the server's base URL, resolves to the port to send to instead. Closed after the run.
   * Default none.
   */
  inFrontOfServer?: (serverBaseUrl: string) => Promise<{ port: number; what: string; close(): Promise<void> }>;
  /** Narration hook (the demo CLI prints these); errors thrown by it are ignored. */
  onStep?: (step: ScenarioStep) => void;
  /** The MCP SDK of each side. Default 1.x both (tests pass 2.x kits). */
  sdk?: { server?: import('./sdk-kit.js').ServerSdkKit; client?: import('./sdk-kit.js').ClientSdkKit };
}

/** One step of the run, for narration. */
export interface ScenarioStep {
  /** ms since the scenario started. */
  atMs: number;
  what: string;
}

/** One tool call the app made. */
export interface CallRecord {
  attempt: number;
  /** ms since the scenario started. */
  startedAtMs: number;
  settledAtMs?: number;
  durationMs?: number;
  outcome: 'result' | 'timeout' | 'error' | 'pending';
  progress: number;
  resultText?: string;
  error?: ErrorRecord;
}

/** An error the app saw, with the fields that classify it. */
export interface ErrorRecord {
  /** `call`: a tool call rejected; `transport`: reported on the client's onerror. */
  source: 'call' | 'transport';
  name: string;
  message: string;
  /** StreamableHTTPError / McpError code. */
  code?: number;
  /** SessionForkError kind. */
  kind?: string;
}

/** What a seed scenario did and what it cost: the evidence its tests and the demo report. */
export interface ScenarioResult {
  server: ScenarioServer;
  client: ScenarioClient;
  healthy: boolean;
  wallMs: number;
  steps: ScenarioStep[];
  calls: CallRecord[];
  /** Results the server produced (tool runs that finished), and which of them reached the app. */
  resultsProduced: number;
  resultsReceived: number;
  /** Server-produced results the app never got. `onWire`: the bytes reached the client (then a layer dropped them). */
  lostResults: Array<{ requestId: string; life: number; onWire: boolean; droppedByDedup: boolean }>;
  /** SSE events the app's naive dedup discarded (stock client only). */
  droppedByDedup: Array<{ eventId: string; kind: string; jsonrpcId?: string }>;
  /** Calls that waited to their timeout, with how long. */
  hung: Array<{ attempt: number; durationMs: number }>;
  errors: ErrorRecord[];
  /** SessionForkErrors the client guard raised (guarded client only). */
  forks: Array<{ kind: string; message: string; atMs: number }>;
  /** Every Last-Event-ID resume the client made and what it was answered. */
  resumes: Array<{ lastEventId: string; status: number; atMs: number }>;
  /** Ids of events received on resumed streams (a healthy resume replays exactly the missing ones). */
  replayedEventIds: string[];
  /** Ids of id-bearing events the client received before the partition cut the stream. */
  eventsBeforePartition: string[];
  /** Counter/guarded sequence numbers that went backwards on one session id. */
  sequenceRegressions: Array<{ fromEventId: string; toEventId: string }>;
  /** Server side: sessions created by initialize vs rehydrated, reaped. */
  sessions: { initialized: number; rehydrated: number; reaped: number; reinitializedByClient: number };
  /** Each rehydration: the life it began, the request method that caused it, and the events that life logged (when it was reaped before the run ended). */
  rehydrations?: Array<{ life: number; method: string; events?: number }>;
  proxy: { connections: number; severed: number; refused: number; bytesDown: number };
  /** What the client's network layer sent and received (the wire tap), `at` in ms since the run started. */
  wire: { exchanges: import('./wire-tap.js').TappedExchange[]; events: import('./wire-tap.js').TappedEvent[] };
}
