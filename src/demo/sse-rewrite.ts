import { SseParser, type SseEvent } from '@forkwatch/instrumentation/wire';

/** Largest SSE block (chars) buffered while looking for its end; a larger one passes through unread. Default 1 MiB. */
export const DEFAULT_MAX_BLOCK_CHARS = 1024 * 1024;

const BLOCK_END = /\r?\n\r?\n|\r\r/;

/**
 * Returns `res` with its text/event-stream body re-framed event by event: `keep(event)` decides,
 * for each complete event, whether its raw bytes are passed on. Comment-only blocks (keep-alives)
 * always pass. Any other response is returned unchanged. The wrapped body propagates errors and
 * cancellation both ways, so the reader above sees the network as it is.
 */
export function rewriteSseResponse(
  res: Response,
  keep: (event: SseEvent) => boolean,
  maxBlockChars = DEFAULT_MAX_BLOCK_CHARS,
): Response {
  const type = res.headers.get('content-type') ?? '';
  if (!res.body || !type.toLowerCase().includes('text/event-stream')) return res;
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buf = '';
  const emit = (controller: TransformStreamDefaultController<Uint8Array>, block: string, end: string): void => {
    const ev = new SseParser(maxBlockChars).push(block + '\n\n')[0];
    let pass = true;
    if (ev) {
      try {
        pass = keep(ev);
      } catch {
        pass = true;
      }
    }
    if (pass) controller.enqueue(encoder.encode(block + end));
  };
  const drain = (controller: TransformStreamDefaultController<Uint8Array>): void => {
    for (;;) {
      const m = BLOCK_END.exec(buf);
      if (!m) break;
      const block = buf.slice(0, m.index);
      buf = buf.slice(m.index + m[0].length);
      emit(controller, block, m[0]);
    }
    if (buf.length > maxBlockChars) {
      controller.enqueue(encoder.encode(buf));
      buf = '';
    }
  };
  const body = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        buf += decoder.decode(chunk, { stream: true });
        drain(controller);
      },
      flush(controller) {
        buf += decoder.decode();
        drain(controller);
        if (buf.length > 0) controller.enqueue(encoder.encode(buf));
      },
    }),
  );
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}
