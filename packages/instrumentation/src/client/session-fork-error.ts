import type { SessionForkKind } from './types.js';

const MESSAGES: Record<SessionForkKind, string> = {
  session_id_changed: 'the server answered under another session id: refusing to adopt a fork',
  incarnation_changed: 'the session was reincarnated: its prior event log is gone',
  replay_gap: 'Last-Event-ID is absent from the server log: a replay would be dropped',
  sequence_regression: 'event sequence went backwards on the same session: silent fork',
  session_not_found: 'the server no longer knows the session: re-initialize',
};

/** Raised when a resume or response would silently fork a session instead of continuing it. */
export class SessionForkError extends Error {
  /** Always `FORKWATCH_ERR_SESSION_FORK` (docs/errors.md); `kind` says which check failed. */
  readonly code = 'FORKWATCH_ERR_SESSION_FORK';
  readonly kind: SessionForkKind;
  /** `forkwatch.session.key` of the session held (never the raw id). */
  readonly sessionKey: string | undefined;
  /** The client's cursor at the time, when it had one. */
  readonly lastEventId: string | undefined;

  constructor(kind: SessionForkKind, sessionKey?: string, lastEventId?: string, detail?: string) {
    super(detail ? `${MESSAGES[kind]} (${detail})` : MESSAGES[kind]);
    this.name = 'SessionForkError';
    this.kind = kind;
    this.sessionKey = sessionKey;
    this.lastEventId = lastEventId;
  }
}

/** True for a SessionForkError, also across module copies (checked by name and kind). */
export function isSessionForkError(err: unknown): err is SessionForkError {
  return err instanceof SessionForkError || (err instanceof Error && err.name === 'SessionForkError' && typeof (err as { kind?: unknown }).kind === 'string');
}
