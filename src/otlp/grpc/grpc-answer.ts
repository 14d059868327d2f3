import type { ServerHttp2Stream } from 'node:http2';
import { constants } from 'node:http2';

/** The gRPC status codes the receiver answers with (grpc/doc/statuscodes.md). */
export const GRPC_STATUS = Object.freeze({
  OK: 0,
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
});

const CONTENT_TYPE = 'application/grpc+proto';
const ACCEPT_ENCODING = 'identity,gzip';

/**
 * `grpc-message` is percent-encoded: every byte outside printable ASCII, and `%`, as `%XX` of its
 * UTF-8 (the gRPC HTTP/2 protocol spec); clients decode it back.
 */
export function escapeGrpcMessage(message: string): string {
  let out = '';
  for (const byte of Buffer.from(message, 'utf8')) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * Answers a call with a non-OK status as a trailers-only response (one HEADERS frame, stream
 * ended), then resets the client's half if it is still sending: the rest of a refused message is
 * never read, so it is never buffered. `details`: `grpc-status-details-bin` bytes.
 */
export function answerStatus(stream: ServerHttp2Stream, code: number, message: string, details?: Buffer): void {
  if (stream.destroyed || stream.closed) return;
  if (!stream.headersSent) {
    const headers: Record<string, string | number> = {
      [constants.HTTP2_HEADER_STATUS]: 200,
      [constants.HTTP2_HEADER_CONTENT_TYPE]: CONTENT_TYPE,
      'grpc-accept-encoding': ACCEPT_ENCODING,
      'grpc-status': code,
      'grpc-message': escapeGrpcMessage(message),
    };
    // Binary metadata travels base64 (unpadded is allowed; padded is what clients expect most).
    if (details !== undefined) headers['grpc-status-details-bin'] = details.toString('base64');
    try {
      stream.respond(headers, { endStream: true });
    } catch {
      // The client reset the stream between the check and the answer: nothing to send to.
    }
  }
  if (!stream.readableEnded) stream.close(constants.NGHTTP2_NO_ERROR);
}

/** Answers OK with one message (an encoded `ExportTraceServiceResponse`, possibly empty). */
export function answerOk(stream: ServerHttp2Stream, message: Uint8Array): void {
  if (stream.destroyed || stream.closed || stream.headersSent) return;
  const frame = Buffer.allocUnsafe(5 + message.byteLength);
  frame[0] = 0; // not compressed
  frame.writeUInt32BE(message.byteLength, 1);
  frame.set(message, 5);
  try {
    stream.respond(
      { [constants.HTTP2_HEADER_STATUS]: 200, [constants.HTTP2_HEADER_CONTENT_TYPE]: CONTENT_TYPE, 'grpc-accept-encoding': ACCEPT_ENCODING },
      { waitForTrailers: true },
    );
    stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': GRPC_STATUS.OK, 'grpc-message': '' }));
    stream.end(frame);
  } catch {
    // Reset by the client meanwhile.
  }
}
