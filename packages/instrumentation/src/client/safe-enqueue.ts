/**
 * Enqueues unless the reader is gone (the SDK cancelled or the transport aborted the stream):
 * a guard's stream filter must never throw into the host's stream.
 */
export function safeEnqueue(controller: TransformStreamDefaultController<Uint8Array>, bytes: Uint8Array): void {
  try {
    controller.enqueue(bytes);
  } catch {
    // nobody reads any more: nothing to deliver
  }
}
