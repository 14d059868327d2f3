import { SPAN_GUARD_FORK, SPAN_RESUME, SPAN_SESSION_ENDED } from '@forkwatch/instrumentation/semconv';

/**
 * Spans that restart a session's decision window when they arrive: a session end, a resume and a
 * guard's refusal are the moments a fork or an orphan happens, and the other side's account of the
 * same moment (a guarded client's `failed_fork` settle, its held `request.sent`) is exported
 * seconds later (a batch exporter's schedule delay, the instrumentation's `requestSpanDelayMs`). A
 * decision taken a window after the first healthy span of the session, a moment after the end,
 * would miss it and page for a call the client already failed. Healthy traffic (events, requests)
 * never restarts the window, so a busy session is still decided on time.
 */
const MOMENTS: ReadonlySet<string> = new Set([SPAN_SESSION_ENDED, SPAN_RESUME, SPAN_GUARD_FORK]);

/** Whether a span of this name restarts its session's decision window. */
export function restartsDecisionWindow(spanName: string): boolean {
  return MOMENTS.has(spanName);
}
