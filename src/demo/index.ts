/** The seed, reproduced with real parts: used by `forkwatch demo` and the end-to-end tests. */
export { runSeedScenario, scenarioTimers } from './seed-scenario.js';
export type { ScenarioTimers } from './seed-scenario.js';
export { formatScenarioResult } from './format-scenario.js';
export { runDemo } from './run-demo.js';
export type { RunDemoOptions } from './run-demo.js';
export { FaultProxy } from './fault-proxy.js';
export type { FaultProxyOptions, FaultProxyStats, PartitionMode } from './fault-proxy.js';
export { startNaiveServer } from './naive-server.js';
export type { NaiveServerOptions } from './naive-server.js';
export { startGuardedServer } from './guarded-server.js';
export type { GuardedServerOptions } from './guarded-server.js';
export { CounterEventStore } from './counter-event-store.js';
export { naiveDedupFetch } from './naive-dedup.js';
export type { DroppedEvent, NaiveDedup } from './naive-dedup.js';
export { createSlowReportServer, SLOW_REPORT_TOOL } from './slow-report-tool.js';
export type { SlowReportOptions, ToolRun } from './slow-report-tool.js';
export type {
  CallRecord,
  DemoServer,
  DemoServerObservations,
  ErrorRecord,
  ScenarioClient,
  ScenarioResult,
  ScenarioServer,
  ScenarioStep,
  SeedScenarioOptions,
} from './types.js';
