import type { IncomingMessage } from 'node:http';
import { createError, type ForkwatchError } from '../errors.js';
import type { IngestLease } from '../otlp/ingest-budget.js';

export interface OtlpBodyLimits {
  /** The announced length (`Content-Length`, already checked against `maxBytes`), or undefined when chunked. */
  length: number | undefined;
  /** Most body bytes accepted as received; past it the read ends with FORKWATCH_ERR_BODY_TOO_LARGE. */
  maxBytes: number;
  /** The request's budget lease: a body of unannounced length grows it as it arrives. */
  lease: IngestLease | undefined;
  /** The error a refused growth ends the read with. */
  overBudget: () => ForkwatchError;
}

/** Ends a read: the whole body, or why it was refused (the caller answers, closing the connection). */
export type OtlpBodyDone = (err: ForkwatchError | undefined, body: Buffer) => void;

const EMPTY = Buffer.alloc(0);

/**
 * Reads a request body into one Buffer and calls `done` exactly once. An announced length is read
 * into a buffer of that size (the budget already holds those bytes); a chunked body is gathered
 * and counted against the lease chunk by chunk, then joined. No stream stage per request: the
 * Transform that counted chunked bodies and fastify's parser chain are gone. A client that goes
 * away mid-body ends the read with FORKWATCH_ERR_OTLP_DECODE ("aborted"), as fastify's reader did.
 */
export function readOtlpBody(req: IncomingMessage, limits: OtlpBodyLimits, done: OtlpBodyDone): void {
  const { length, maxBytes, lease } = limits;
  // Nothing to wait for: the server discards the (empty) rest once the answer is sent.
  if (length === 0) return done(undefined, EMPTY);
  const whole = length === undefined ? undefined : Buffer.allocUnsafe(length);
  const chunks: Buffer[] = [];
  let seen = 0;
  let finished = false;

  const finish = (err: ForkwatchError | undefined, body: Buffer): void => {
    if (finished) return;
    finished = true;
    req.removeListener('data', onData);
    req.removeListener('end', onEnd);
    req.removeListener('error', onError);
    done(err, body);
  };
  const onData = (chunk: Buffer): void => {
    const at = seen;
    seen += chunk.length;
    if (whole !== undefined) {
      // Node's parser never hands more than Content-Length; a body that did would be undecodable.
      if (seen > whole.length) return finish(createError('FORKWATCH_ERR_OTLP_DECODE', 'body longer than its Content-Length'), EMPTY);
      chunk.copy(whole, at);
      return;
    }
    if (lease !== undefined && !lease.growTo(seen)) return finish(limits.overBudget(), EMPTY);
    if (seen > maxBytes) return finish(createError('FORKWATCH_ERR_BODY_TOO_LARGE', maxBytes), EMPTY);
    chunks.push(chunk);
  };
  const onEnd = (): void => {
    if (whole !== undefined) {
      if (seen !== whole.length) return finish(createError('FORKWATCH_ERR_OTLP_DECODE', 'body shorter than its Content-Length'), EMPTY);
      return finish(undefined, whole);
    }
    // Copied even when one chunk: the decoder must not read a view of the socket's read buffer.
    finish(undefined, Buffer.concat(chunks, seen));
  };
  const onError = (err: Error): void => finish(createError('FORKWATCH_ERR_OTLP_DECODE', err.message), EMPTY);
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
}
