/** Receives the text of a body as it passes, and its end. */
export interface BodyObserver {
  text(chunk: string): void;
  end(): void;
}

/**
 * A pass-through of `body` that hands each chunk's text to `observer` before passing the bytes
 * on unchanged: no buffering, no delay, no change of chunking. Observer failures are swallowed
 * (counted by the caller if it cares): observation never breaks the host's stream.
 */
export function observeBody(body: ReadableStream<Uint8Array>, observer: BodyObserver): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  let broken = false;
  const safe = (f: () => void): void => {
    if (broken) return;
    try {
      f();
    } catch {
      broken = true;
    }
  };
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        safe(() => observer.text(decoder.decode(chunk, { stream: true })));
        controller.enqueue(chunk);
      },
      flush() {
        safe(() => {
          observer.text(decoder.decode());
          observer.end();
        });
      },
    }),
  );
}
