/**
 * Decode-and-correlate work of received OTLP batches, one batch per turn of the event loop.
 *
 * Under overload many bodies finish arriving in the same poll phase of the event loop; run in
 * their `end` callbacks, all of their decodes and engine ingests ran back to back before the loop
 * reached a socket again, and a `/readyz` waited for all of them (p99 over 1 s with 50 clients
 * sending 4 MiB bodies on a loaded machine; 16 bodies fit the default 64 MiB budget at once, at
 * 20-60 ms each). Queued here, each batch runs in its own `setImmediate` turn, so health probes
 * and new connections are served between two batches: a probe waits for at most one batch.
 * The bodies waiting here still hold their ingest-budget leases, so the queue's memory is within
 * `maxInFlightBytes`. Shared by every receiver of a detector so that together they take turns.
 */
export class IngestTurns {
  private readonly queue: Array<() => void> = [];
  private scheduled = false;
  private ran = 0;

  /** Batches waiting for their turn now. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Batches run since start. */
  get completed(): number {
    return this.ran;
  }

  /** Runs `work` in a later turn of the event loop, after the work queued before it. `work` answers its own errors: it must not throw. */
  run(work: () => void): void {
    this.queue.push(work);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.next);
    }
  }

  private readonly next = (): void => {
    const work = this.queue.shift();
    this.scheduled = this.queue.length > 0;
    if (this.scheduled) setImmediate(this.next);
    if (work === undefined) return;
    this.ran++;
    work();
  };
}
