/** Receives the text of a body as it passes, and its end. */
export interface BodyObserver {
  text(chunk: string): void;
  end(): void;
}

/**
 * A pass-through of `body` that hands each chunk's text to `observer` before passing the bytes
 * on unchanged: no buffering, no delay, no change of chunking. Observer failures are swallowed
 * (counted by the caller if it cares): observation never breaks the host's stream.
 *
 * A single pull-driven stream rather than `pipeThrough(TransformStream)`: Node's web streams cost
 * tens of microseconds per pipe stage and a transform is three of them. With a high-water mark of
 * 0 nothing is read from `body` before the consumer asks, so backpressure is the consumer's own;
 * `body` is locked only at the first read, and a cancel goes straight to it.
 */
export function observeBody(body: ReadableStream<Uint8Array>, observer: BodyObserver): ReadableStream<Uint8Array> {
  let decoder: InstanceType<typeof TextDecoder> | undefined;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let broken = false;
  const text = (chunk: Uint8Array | undefined): void => {
    if (broken) return;
    try {
      decoder ??= new TextDecoder();
      if (chunk === undefined) {
        observer.text(decoder.decode());
        observer.end();
      } else {
        observer.text(decoder.decode(chunk, { stream: true }));
      }
    } catch {
      broken = true;
    }
  };
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        reader ??= body.getReader();
        return reader.read().then((r) => {
          if (r.done) {
            text(undefined);
            controller.close();
          } else {
            text(r.value);
            controller.enqueue(r.value);
          }
        });
      },
      cancel(reason) {
        return reader ? reader.cancel(reason) : body.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
