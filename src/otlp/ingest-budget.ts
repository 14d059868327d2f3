/**
 * The bytes of OTLP ingest in flight: request bodies being read (counted as they arrive when the
 * length is not announced) and decoded batches waiting for their commit. Shared by every receiver
 * (OTLP/HTTP, OTLP/gRPC) of one detector so that together they stay under one bound; knows no
 * transport. A receiver asks before it reads a body and answers "retry later" (HTTP `429` +
 * `Retry-After`, gRPC `RESOURCE_EXHAUSTED` with retry info) when the budget says no.
 */
export class IngestBudget {
  private used = 0;
  private peak = 0;
  private refusals = 0;

  /** @param maxBytes the bound, bytes; must be positive. */
  constructor(readonly maxBytes: number) {
    if (!(Number.isFinite(maxBytes) && maxBytes > 0)) throw new RangeError(`ingest budget must be a positive number of bytes, got ${maxBytes}`);
  }

  /** Bytes held now. */
  get inFlight(): number {
    return this.used;
  }

  /** Most bytes held at once since start. */
  get peakInFlight(): number {
    return this.peak;
  }

  /** How many acquisitions and growths were refused since start. */
  get refused(): number {
    return this.refusals;
  }

  /**
   * Reserves `bytes` (the announced body length, or 0 when unknown) and returns a lease to grow
   * and release, or undefined when the reservation would pass the budget. A request is always
   * admitted while nothing else is in flight, so a budget smaller than one body cannot starve it.
   */
  acquire(bytes: number): IngestLease | undefined {
    const n = Math.max(0, Math.ceil(bytes));
    if (!this.fits(n)) {
      this.refusals++;
      return undefined;
    }
    this.take(n);
    return new IngestLease(this, n);
  }

  /** @internal */
  fits(n: number): boolean {
    return this.used === 0 || this.used + n <= this.maxBytes;
  }

  /** @internal */
  take(n: number): void {
    this.used += n;
    if (this.used > this.peak) this.peak = this.used;
  }

  /** @internal */
  give(n: number): void {
    this.used = Math.max(0, this.used - n);
  }

  /** @internal */
  refuse(): void {
    this.refusals++;
  }
}

/** One request's share of an {@link IngestBudget}. Release it exactly when the request is answered. */
export class IngestLease {
  private released = false;

  constructor(
    private readonly budget: IngestBudget,
    private held: number,
  ) {}

  /** Bytes this lease holds. */
  get bytes(): number {
    return this.held;
  }

  /**
   * Holds at least `total` bytes (e.g. body bytes read so far, or the inflated size). False, and
   * nothing taken, when that would pass the budget; the caller stops reading and refuses.
   */
  growTo(total: number): boolean {
    if (this.released) return false;
    const extra = Math.ceil(total) - this.held;
    if (extra <= 0) return true;
    // Alone in flight, a lease may still grow: the body limits bound it.
    if (this.budget.inFlight !== this.held && !this.budget.fits(extra)) {
      this.budget.refuse();
      return false;
    }
    this.budget.take(extra);
    this.held += extra;
    return true;
  }

  /** Gives the bytes back; later calls do nothing. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.give(this.held);
    this.held = 0;
  }
}
