import type { ToolRun } from './slow-report-tool.js';
import type { DemoServerObservations } from './types.js';

/** What a demo server records about itself, and how it narrates. */
export interface ServerObserver {
  obs: DemoServerObservations;
  /** Tells the narrator; a narrator that throws never breaks the server. */
  note(what: string): void;
  /** Records a tool run once, however often its progress reports it. */
  onRun(run: ToolRun): void;
}

export function createServerObserver(onNote: ((what: string) => void) | undefined): ServerObserver {
  const obs: DemoServerObservations = { created: [], reaped: [], answered: [], runs: [] };
  return {
    obs,
    note(what) {
      try {
        onNote?.(what);
      } catch {
        // narration must not break the server
      }
    },
    onRun(run) {
      if (!obs.runs.includes(run)) obs.runs.push(run);
    },
  };
}
