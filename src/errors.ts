/**
 * Every error forkwatch raises or answers with has a code defined here and documented in
 * docs/errors.md; test/errors.test.ts keeps the two in step.
 */
import { INSTRUMENTATION_ERROR_CODES } from '@forkwatch/instrumentation/errors';

export interface ErrorDefinition {
  /** HTTP status when the error is answered over HTTP; 500 otherwise. */
  status: number;
  /** Default message; `%s` placeholders are filled by createError's arguments. */
  message: string;
}

export const ERROR_CODES = {
  // ---- instrumentation (guards, SessionForkError), defined in @forkwatch/instrumentation ----
  ...INSTRUMENTATION_ERROR_CODES,

  // ---- configuration and CLI ----
  FORKWATCH_ERR_CLI_USAGE: { status: 500, message: '%s' },
  FORKWATCH_ERR_LISTEN: { status: 500, message: 'cannot listen on %s: %s; stop what holds it or choose another port with %s (0: any free port)' },

  // ---- OTLP receiver ----
  FORKWATCH_ERR_UNAUTHORIZED: { status: 401, message: 'missing or invalid bearer token' },
  FORKWATCH_ERR_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: 'unsupported content type %s: use application/x-protobuf or application/json',
  },
  FORKWATCH_ERR_UNSUPPORTED_ENCODING: { status: 415, message: 'unsupported content encoding %s: use gzip or identity' },
  FORKWATCH_ERR_BODY_TOO_LARGE: { status: 413, message: 'request body exceeds %s bytes' },
  FORKWATCH_ERR_DECOMPRESSED_TOO_LARGE: { status: 413, message: 'decompressed body exceeds %s bytes' },
  FORKWATCH_ERR_BAD_GZIP: { status: 400, message: 'body is not valid gzip: %s' },
  FORKWATCH_ERR_OTLP_DECODE: { status: 400, message: 'cannot decode OTLP payload: %s' },
  FORKWATCH_ERR_OVERLOADED: { status: 503, message: 'ingest queue full: retry after %s s' },
  FORKWATCH_ERR_STORAGE_UNAVAILABLE: { status: 503, message: 'storage failing (%s): nothing is acknowledged until a commit succeeds; retry after %s s' },
  FORKWATCH_ERR_INGEST_BUDGET: { status: 429, message: 'ingest bytes in flight would pass the budget of %s bytes: retry after %s s' },
  FORKWATCH_ERR_REQUEST_TIMEOUT: { status: 408, message: 'request message not received within %s ms' },

  // ---- API ----
  FORKWATCH_ERR_AUTH_THROTTLED: { status: 429, message: 'too many wrong tokens from this address: retry after %s s' },
  FORKWATCH_ERR_NOT_FOUND: { status: 404, message: '%s not found' },
  FORKWATCH_ERR_BAD_QUERY: { status: 400, message: 'bad query parameter: %s' },
  FORKWATCH_ERR_INTERNAL: { status: 500, message: 'internal error: %s' },

  // ---- storage ----
  FORKWATCH_ERR_STORAGE: { status: 500, message: 'storage error: %s' },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An error with a stable `code` and the HTTP `statusCode` it is answered with. */
export class ForkwatchError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  constructor(code: ErrorCode, ...args: Array<string | number>) {
    const def: ErrorDefinition = ERROR_CODES[code];
    let i = 0;
    super(def.message.replace(/%s/g, () => String(args[i++] ?? '')));
    this.name = 'ForkwatchError';
    this.code = code;
    this.statusCode = def.status;
  }
}

/** Builds a ForkwatchError; `args` fill the message's `%s` placeholders in order. */
export function createError(code: ErrorCode, ...args: Array<string | number>): ForkwatchError {
  return new ForkwatchError(code, ...args);
}
