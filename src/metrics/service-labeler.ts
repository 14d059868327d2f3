/** Default cap on distinct `service` label values; later services are labelled {@link OVERFLOW_SERVICE}. */
export const DEFAULT_MAX_SERVICES = 50;
/** Longest label value kept, in code points; longer values are cut. */
export const MAX_LABEL_VALUE_LENGTH = 64;
/** The `service` label of every service past the cap. */
export const OVERFLOW_SERVICE = 'other';
/** The `service` label of an empty service name. */
export const UNKNOWN_SERVICE = 'unknown_service';

/**
 * Makes an arbitrary string safe as a label value: control characters dropped (they break
 * dashboards and logs, not the format), cut to {@link MAX_LABEL_VALUE_LENGTH} code points.
 */
export function sanitizeLabelValue(v: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = [...v.replace(/[\u0000-\u001f\u007f]/g, '')].slice(0, MAX_LABEL_VALUE_LENGTH).join('');
  return clean;
}

/**
 * Keeps the `service` label's cardinality bounded: the first `maxServices` distinct (sanitized)
 * names keep their name, the rest share {@link OVERFLOW_SERVICE}. First come, first kept: a
 * restart may assign different services to `other`, which is the price of a hard bound.
 */
export class ServiceLabeler {
  readonly #max: number;
  readonly #known = new Set<string>();
  readonly #onNewLabel: (label: string) => void;

  /** `onNewLabel` runs once per label value the first time it is handed out (zero-initialisation). */
  constructor(maxServices: number = DEFAULT_MAX_SERVICES, onNewLabel: (label: string) => void = () => {}) {
    this.#max = Math.max(0, Math.floor(maxServices));
    this.#onNewLabel = onNewLabel;
  }

  /** The label value for `service`, registering it if there is room. */
  label(service: string): string {
    let v = sanitizeLabelValue(service);
    if (v === '') v = UNKNOWN_SERVICE;
    if (this.#known.has(v)) return v;
    if (this.#known.size >= this.#max) v = OVERFLOW_SERVICE;
    if (!this.#known.has(v)) {
      this.#known.add(v);
      this.#onNewLabel(v);
    }
    return v;
  }

  /** Every label value handed out so far (at most `maxServices` + 1). */
  labels(): Iterable<string> {
    return this.#known;
  }
}
