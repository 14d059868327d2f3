/**
 * Bounds the OTLP decoders apply to hostile or oversized values. Every bound has a default here;
 * callers override a subset with `Partial<DecodeLimits>`.
 */
export interface DecodeLimits {
  /** String attribute values (and array/kvlist JSON forms) are cut to this many UTF-16 code units. */
  maxAttributeValueLength: number;
  /** Attribute keys are cut to this many UTF-16 code units. */
  maxAttributeKeyLength: number;
  /** Attributes kept per span, in wire order; the rest are dropped. */
  maxAttributesPerSpan: number;
  /** AnyValue nesting levels (a scalar attribute is level 1); deeper is a decode error. */
  maxNestingDepth: number;
  /** Span names are cut to this many UTF-16 code units. */
  maxSpanNameLength: number;
}

/** The defaults of {@link DecodeLimits}. */
export const DEFAULT_DECODE_LIMITS: Readonly<DecodeLimits> = Object.freeze({
  maxAttributeValueLength: 1024, // UTF-16 code units
  maxAttributeKeyLength: 256, // UTF-16 code units
  maxAttributesPerSpan: 128, // attributes
  maxNestingDepth: 8, // AnyValue levels
  maxSpanNameLength: 256, // UTF-16 code units
});

/** Fills unset limits with the defaults; non-positive or non-integer values fall back to defaults. */
export function resolveDecodeLimits(limits?: Partial<DecodeLimits>): DecodeLimits {
  const out: DecodeLimits = { ...DEFAULT_DECODE_LIMITS };
  if (limits) {
    for (const k of Object.keys(DEFAULT_DECODE_LIMITS) as Array<keyof DecodeLimits>) {
      const v = limits[k];
      if (typeof v === 'number' && Number.isInteger(v) && v > 0) out[k] = v;
    }
  }
  return out;
}
