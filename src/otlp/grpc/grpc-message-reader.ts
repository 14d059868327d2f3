import type { ServerHttp2Stream } from 'node:http2';

/** The 5-byte prefix of a gRPC message: compressed flag, then the message's length (bytes, big-endian). */
export interface GrpcMessagePrefix {
  compressed: boolean;
  length: number;
}

/** How a read ended: the whole message, or why it cannot be read (the caller answers INVALID_ARGUMENT or INTERNAL). */
export type GrpcMessageDone = (problem: string | undefined, message: Buffer, prefix: GrpcMessagePrefix) => void;

const PREFIX_BYTES = 5;
const EMPTY = Buffer.alloc(0);

/**
 * Reads the one length-prefixed message of a unary call. `admit` sees the prefix before a single
 * message byte is kept: it reserves the announced length (the ingest budget, the size limits) or
 * answers the call itself and returns false, and then nothing more is read. Only an admitted
 * message gets a buffer, of exactly its announced length; bytes past it, a second message or a
 * stream that ends short are problems. `done` is called at most once, and never after a refusal.
 */
export function readGrpcMessage(stream: ServerHttp2Stream, admit: (prefix: GrpcMessagePrefix) => boolean, done: GrpcMessageDone): void {
  const head = Buffer.alloc(PREFIX_BYTES);
  let headSeen = 0;
  let prefix: GrpcMessagePrefix | undefined;
  let body: Buffer | undefined;
  let bodySeen = 0;
  let over = false;

  const stop = (): void => {
    over = true;
    stream.removeListener('data', onData);
    stream.removeListener('end', onEnd);
  };
  const finish = (problem: string | undefined): void => {
    if (over) return;
    stop();
    done(problem, problem === undefined ? (body ?? EMPTY) : EMPTY, prefix ?? { compressed: false, length: 0 });
  };
  const onData = (chunk: Buffer): void => {
    let at = 0;
    if (prefix === undefined) {
      const take = Math.min(PREFIX_BYTES - headSeen, chunk.length);
      chunk.copy(head, headSeen, 0, take);
      headSeen += take;
      at = take;
      if (headSeen < PREFIX_BYTES) return;
      if (head[0]! > 1) return finish(`unknown message flag ${head[0]}`);
      prefix = { compressed: head[0] === 1, length: head.readUInt32BE(1) };
      if (!admit(prefix)) return stop();
      body = prefix.length === 0 ? EMPTY : Buffer.allocUnsafe(prefix.length);
    }
    const rest = chunk.length - at;
    if (rest === 0) return;
    if (bodySeen + rest > body!.length) return finish('more bytes than one message: Export takes exactly one');
    chunk.copy(body!, bodySeen, at);
    bodySeen += rest;
  };
  const onEnd = (): void => {
    if (prefix === undefined) return finish(headSeen === 0 ? 'no request message' : 'stream ended inside the message prefix');
    if (bodySeen !== prefix.length) return finish(`stream ended after ${bodySeen} of the ${prefix.length} message bytes announced`);
    finish(undefined);
  };
  stream.on('data', onData);
  stream.on('end', onEnd);
}
