import type { FindingKind } from '../model/finding.js';

/**
 * Where docs/runbook.md is read from by people following a link. Alerts use the same base
 * (collector/prometheus/rules/forkwatch.rules.yml), so a fork of the repository moves both.
 */
export const RUNBOOK_URL = 'https://github.com/forkwatch/forkwatch/blob/main/docs/runbook.md';

/** What to do about one kind of finding: a short text from its runbook section, and the section. */
export interface RunbookAdvice {
  /** Alert (and runbook section) that pages for this kind. */
  alert: string;
  /** Anchor of the section in docs/runbook.md. */
  anchor: string;
  /** One or more short steps, plain text. */
  steps: readonly string[];
}

const FORK_STEPS = [
  'Open the timeline below: two incarnations under one session key, the second created by something other than initialize, is the fork.',
  'Find the server build and its session handling: a transports[sessionId] map that rebuilds a transport for an unknown id, or an event store without per-session eviction. The server must answer 404 to a resume of an unknown session, never create one (the @forkwatch/instrumentation/server guard does this).',
  "Mitigate now: lengthen the server's session idle timeout above the clients' reconnect backoff, or shorten the backoff.",
  "Clients: enable the @forkwatch/instrumentation/client guard so a fork fails pending requests at once and re-initializes, and key dedup on (session, incarnation, event).",
  'Affected users: the requestId and progressToken name the request whose result may be lost; tool calls with side effects may have run twice.',
] as const;

const FORK: RunbookAdvice = { alert: 'MCPSessionForkDetected', anchor: 'mcpsessionforkdetected', steps: FORK_STEPS };

/**
 * Advice per finding kind, condensed from docs/runbook.md (test/ui keeps the anchors in step).
 * Kinds added later without an entry get {@link GENERIC_ADVICE}.
 */
export const RUNBOOK_ADVICE: Readonly<Partial<Record<FindingKind | (string & {}), RunbookAdvice>>> = {
  minted_on_resume: FORK,
  incarnation_changed: FORK,
  sequence_regression: FORK,
  replay_gap: {
    ...FORK,
    steps: [
      'Open the timeline below: the resume asked for an event the server no longer had, and the server replayed anyway.',
      'The server must answer 409 (event absent from its log) instead of replaying from the start; raise the event-log size or retention above the clients\' reconnect backoff.',
      "If the summary says the replay re-sent an event sent before the cursor, the event store replays out of the order it stored (the MCP SDK examples' InMemoryEventStore sorts ids ending in a random part) and skips events stored after the cursor: use a store that replays exactly the events after Last-Event-ID, in order.",
      ...FORK_STEPS.slice(3),
    ],
  },
  dedup_loss: {
    ...FORK,
    steps: [
      "Open the timeline below: the crossed-out events are the ones the client's dedup dropped although the new incarnation really sent them.",
      "Key client dedup on (session, incarnation, event) and re-issue the lost request(s) named here.",
      ...FORK_STEPS.slice(1, 3),
    ],
  },
  orphaned_progress_token: {
    alert: 'MCPOrphanedProgressTokens',
    anchor: 'mcporphanedprogresstokens',
    steps: [
      'Open the timeline below: the orphaned call is drawn from when it was sent to where the view ends.',
      'Usually a consequence of a fork: handle the fork finding of the same session first.',
      "Without a fork, the session was reaped while the request was pending: check the server's idle timeout against its longest tool call, and give the client @forkwatch/instrumentation/client's guard (connectGuarded), which fails pending calls at once and re-initializes.",
    ],
  },
  duplicate_execution: {
    alert: 'MCPDuplicateToolExecution',
    anchor: 'mcpduplicatetoolexecution',
    steps: [
      'Open the timeline below: the original call and its re-issue both reached the handler and completed on the server.',
      'The server kept running a call whose response stream had closed: on the 2026-07-28 transport a closed stream is a cancellation, so stop the handler on abort (its AbortSignal), or make the tool idempotent.',
      'Affected users: the tool ran twice; check its side effects (payments, writes, messages) for the request ids named here.',
    ],
  },
  orphaned_request: {
    alert: 'MCPOrphanedRequests',
    anchor: 'mcporphanedrequests',
    steps: [
      'Open the timeline below: the request lost its response stream and was neither answered nor re-issued.',
      'Look for what cuts streams (a proxy or load balancer idle timeout, restarts) and make the client re-issue the call under a new request id, as the transport requires.',
    ],
  },
  work_after_cancel: {
    alert: 'MCPOrphanedRequests',
    anchor: 'mcporphanedrequests',
    steps: [
      'Open the timeline below: the server kept sending messages for a request after its stream had closed.',
      'A closed stream cancels the request on the 2026-07-28 transport: stop the handler on abort so its work and cost end with the stream.',
    ],
  },
};

/** For a kind without its own entry: the runbook's start. */
export const GENERIC_ADVICE: RunbookAdvice = {
  alert: 'runbook',
  anchor: '',
  steps: ['Open the timeline below, then follow the runbook section of the alert that paged.'],
};

/** The advice for a kind, {@link GENERIC_ADVICE} when it has none. */
export function adviceFor(kind: string): RunbookAdvice {
  return RUNBOOK_ADVICE[kind] ?? GENERIC_ADVICE;
}

/** The runbook section URL of a kind. */
export function runbookLink(kind: string): string {
  const a = adviceFor(kind).anchor;
  return a === '' ? RUNBOOK_URL : `${RUNBOOK_URL}#${a}`;
}
