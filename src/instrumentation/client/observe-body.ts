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

type Decoder = InstanceType<typeof TextDecoder>;

/** Reading methods of a ReadableStream a consumer may start with. */
const READ_METHODS = ['pipeThrough', 'pipeTo', 'getReader', 'tee', 'values', Symbol.asyncIterator] as const;

/**
 * Makes the `TextDecoder` inside a `TextDecoderStream` report its output to `observer`: the text
 * the consumer decodes anyway, seen without a second decode or another stream stage. Node keeps
 * the decoder under an own symbol property; any other shape answers false.
 */
function hookDecoderStream(transform: unknown, observer: BodyObserver): boolean {
  if (typeof TextDecoderStream === 'undefined' || !(transform instanceof TextDecoderStream)) return false;
  for (const sym of Object.getOwnPropertySymbols(transform)) {
    const handle = (transform as unknown as Record<symbol, unknown>)[sym];
    if (!(handle instanceof TextDecoder)) continue;
    const decode = handle.decode;
    let broken = false;
    Object.defineProperty(handle, 'decode', {
      configurable: true,
      writable: true,
      value: function (this: Decoder, input?: Parameters<Decoder['decode']>[0], options?: Parameters<Decoder['decode']>[1]): string {
        const out = decode.call(this, input, options);
        if (!broken) {
          try {
            observer.text(out);
            // The stream's flush decodes once without `stream`: the end of the body.
            if (options?.stream !== true) observer.end();
          } catch {
            broken = true;
          }
        }
        return out;
      },
    });
    return true;
  }
  return false;
}

/**
 * Observes `body` in place, with no new stream when the consumer decodes it the way the MCP SDK
 * does (`body.pipeThrough(new TextDecoderStream())`): that decoder's output is the observed text.
 * Any other first read (getReader, pipeTo, tee, iteration) goes through {@link observeBody}
 * instead. The hooks are own properties of this one stream, removed at the first read.
 */
export function observeBodyInPlace(body: ReadableStream<Uint8Array>, observer: BodyObserver): void {
  const target = body as unknown as Record<string | symbol, unknown>;
  const restore = (): void => {
    for (const k of READ_METHODS) delete target[k];
  };
  const define = (k: string | symbol, value: (...a: unknown[]) => unknown): void => {
    Object.defineProperty(body, k, { configurable: true, writable: true, value });
  };
  define('pipeThrough', (transform: unknown, options: unknown) => {
    restore();
    const source = hookDecoderStream(transform, observer) ? body : observeBody(body, observer);
    return source.pipeThrough(transform as Parameters<typeof source.pipeThrough>[0], options as Parameters<typeof source.pipeThrough>[1]);
  });
  for (const k of READ_METHODS) {
    if (k === 'pipeThrough') continue;
    define(k, (...args: unknown[]) => {
      restore();
      const observed = observeBody(body, observer) as unknown as Record<string | symbol, (...a: unknown[]) => unknown>;
      return observed[k]!.apply(observed, args);
    });
  }
}
