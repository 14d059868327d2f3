/**
 * Error codes the instrumentation raises. The detector's table (forkwatch's src/errors.ts) spreads
 * this one, so both packages document their codes in one docs/errors.md and one test keeps them in
 * step. Codes are never reused for another meaning.
 */

export interface InstrumentationErrorDefinition {
  /** HTTP status when the error is answered over HTTP; 500 otherwise. */
  status: number;
  /** Default message; `%s` placeholders are filled by the arguments. */
  message: string;
}

export const INSTRUMENTATION_ERROR_CODES = {
  /** A guard's options were invalid; thrown at construction (guards fail fast, observers never throw). */
  FORKWATCH_ERR_CONFIG_INVALID: { status: 500, message: 'invalid configuration: %s' },
  /** Carried by SessionForkError (`code`), with its `kind`. */
  FORKWATCH_ERR_SESSION_FORK: { status: 500, message: '%s' },
} as const satisfies Record<string, InstrumentationErrorDefinition>;

export type InstrumentationErrorCode = keyof typeof INSTRUMENTATION_ERROR_CODES;

/** An instrumentation error with a stable `code`. */
export class InstrumentationError extends Error {
  readonly code: InstrumentationErrorCode;
  readonly statusCode: number;
  constructor(code: InstrumentationErrorCode, ...args: Array<string | number>) {
    const def: InstrumentationErrorDefinition = INSTRUMENTATION_ERROR_CODES[code];
    let i = 0;
    super(def.message.replace(/%s/g, () => String(args[i++] ?? '')));
    this.name = 'ForkwatchError';
    this.code = code;
    this.statusCode = def.status;
  }
}

/** Builds an InstrumentationError; `args` fill the message's `%s` placeholders in order. */
export function createError(code: InstrumentationErrorCode, ...args: Array<string | number>): InstrumentationError {
  return new InstrumentationError(code, ...args);
}
