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
type Method = (...a: unknown[]) => unknown;

/** Reading methods of a ReadableStream a consumer may start with. */
const READ_METHODS = ['pipeThrough', 'pipeTo', 'getReader', 'tee', 'values', Symbol.asyncIterator] as const;

/** Where a hooked stream or decoder keeps its observer (own, non-enumerable, removed with the hooks). */
const OBSERVER = Symbol('forkwatch.observer');

const streamMethods = ReadableStream.prototype as unknown as Record<string | symbol, Method>;
const nativeDecode = typeof TextDecoder === 'undefined' ? undefined : TextDecoder.prototype.decode;

/**
 * One descriptor reused for every observer property: a response is hooked per request, and a
 * fresh descriptor object each time is garbage on the host's hot path.
 */
const observerDescriptor: PropertyDescriptor = { configurable: true, writable: true, enumerable: false, value: undefined };

function defineObserver(target: object, observer: BodyObserver | undefined): void {
  observerDescriptor.value = observer;
  Object.defineProperty(target, OBSERVER, observerDescriptor);
  observerDescriptor.value = undefined;
}

/** The own symbol under which Node's TextDecoderStream keeps its decoder, once found. */
let decoderKey: symbol | undefined;

function decoderOf(transform: object): Decoder | undefined {
  const fields = transform as unknown as Record<symbol, unknown>;
  if (decoderKey !== undefined) {
    const handle = fields[decoderKey];
    if (handle instanceof TextDecoder) return handle;
  }
  for (const sym of Object.getOwnPropertySymbols(transform)) {
    const handle = fields[sym];
    if (!(handle instanceof TextDecoder)) continue;
    decoderKey = sym;
    return handle;
  }
  return undefined;
}

/**
 * The decode of a hooked decoder: one function for every decoder (no closure per response), its
 * observer read from the decoder itself. A failing observer is dropped, never rethrown.
 */
function observedDecode(this: Decoder, input?: Parameters<Decoder['decode']>[0], options?: Parameters<Decoder['decode']>[1]): string {
  const out = nativeDecode!.call(this, input, options);
  const self = this as unknown as Record<symbol, BodyObserver | undefined>;
  const observer = self[OBSERVER];
  if (observer !== undefined) {
    try {
      observer.text(out);
      // The stream's flush decodes once without `stream`: the end of the body.
      if (options?.stream !== true) observer.end();
    } catch {
      self[OBSERVER] = undefined;
    }
  }
  return out;
}

const decodeDescriptor: PropertyDescriptor = { configurable: true, writable: true, value: observedDecode };

/**
 * Makes the `TextDecoder` inside a `TextDecoderStream` report its output to `observer`: the text
 * the consumer decodes anyway, seen without a second decode or another stream stage. Node keeps
 * the decoder under an own symbol property; any other shape (or a decoder whose decode someone
 * else replaced) answers false.
 */
function hookDecoderStream(transform: unknown, observer: BodyObserver): boolean {
  if (nativeDecode === undefined || typeof TextDecoderStream === 'undefined' || !(transform instanceof TextDecoderStream)) return false;
  const handle = decoderOf(transform);
  if (handle === undefined || handle.decode !== nativeDecode) return false;
  Object.defineProperty(handle, 'decode', decodeDescriptor);
  defineObserver(handle, observer);
  return true;
}

/** Observers of streams hooked through {@link HOOKED_STREAM}, by stream. */
const streamObservers = new WeakMap<object, BodyObserver>();

/**
 * Takes the observer off a hooked stream and removes the hooks. Own-property hooks go newest
 * first: V8 undoes the deletion of an object's last-added property by returning to its previous
 * hidden class, where another order leaves a slow dictionary-mode object in the consumer's code.
 */
function unhook(stream: object): BodyObserver | undefined {
  if (Object.getPrototypeOf(stream) === HOOKED_STREAM) {
    Object.setPrototypeOf(stream, ReadableStream.prototype);
    const observer = streamObservers.get(stream);
    streamObservers.delete(stream);
    return observer;
  }
  const target = stream as Record<string | symbol, unknown>;
  if (!Object.prototype.hasOwnProperty.call(target, OBSERVER)) return undefined;
  const observer = target[OBSERVER] as BodyObserver | undefined;
  delete target[OBSERVER];
  for (let i = READ_METHODS.length - 1; i >= 0; i--) delete target[READ_METHODS[i]!];
  return observer;
}

function hookedPipeThrough(this: ReadableStream<Uint8Array>, transform: unknown, options: unknown): unknown {
  const observer = unhook(this);
  const source = observer === undefined || hookDecoderStream(transform, observer) ? this : observeBody(this, observer);
  return streamMethods.pipeThrough!.call(source, transform, options);
}

/** The other first reads: through a pass-through stream that observes. */
function hookedRead(k: (typeof READ_METHODS)[number]): Method {
  return function (this: ReadableStream<Uint8Array>, ...args: unknown[]): unknown {
    const observer = unhook(this);
    const source = observer === undefined ? this : observeBody(this, observer);
    return streamMethods[k]!.apply(source, args);
  };
}

/** One descriptor per read method, made once: hooking a body allocates nothing of its own. */
const readDescriptors = READ_METHODS.map((k): [string | symbol, PropertyDescriptor] => [
  k,
  { configurable: true, writable: true, value: k === 'pipeThrough' ? hookedPipeThrough : hookedRead(k) },
]);

/** ReadableStream.prototype with the read methods hooked: what a plain stream is switched to. */
const HOOKED_STREAM: object = Object.create(ReadableStream.prototype, Object.fromEntries(readDescriptors));

/**
 * Observes `body` in place, with no new stream when the consumer decodes it the way the MCP SDK
 * does (`body.pipeThrough(new TextDecoderStream())`): that decoder's output is the observed text.
 * Any other first read (getReader, pipeTo, tee, iteration) goes through {@link observeBody}
 * instead. Until its first read the stream inherits from a copy of ReadableStream.prototype with
 * the read methods hooked, and gets its own prototype back at that read.
 *
 * Why a prototype switch and no own properties: Node 20's web streams are made transferable one
 * by one, and no two share a hidden class, so every property added to a body built a new hidden
 * class and descriptor array (~2 KB a response, seven of them); the switch builds one, and
 * leaves no own property behind. A stream of any other prototype (a subclass) gets own-property
 * hooks instead, removed at the first read.
 */
export function observeBodyInPlace(body: ReadableStream<Uint8Array>, observer: BodyObserver): void {
  if (Object.getPrototypeOf(body) === ReadableStream.prototype) {
    streamObservers.set(body, observer);
    Object.setPrototypeOf(body, HOOKED_STREAM);
    return;
  }
  for (let i = 0; i < readDescriptors.length; i++) Object.defineProperty(body, readDescriptors[i]![0], readDescriptors[i]![1]);
  // Defined last so that it goes first (see unhook).
  defineObserver(body, observer);
}
