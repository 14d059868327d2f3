import * as semconv from '@forkwatch/instrumentation/semconv';

/**
 * The attribute keys of the forkwatch schema (every `ATTR_*` of semconv), in a fixed order: the
 * only keys the engine reads, each at its index in a {@link SpanBatch} row's slots, and the only
 * keys the protobuf decoder's generated code may name.
 */
export const SCHEMA_ATTRIBUTE_KEYS: readonly string[] = Object.entries(semconv)
  .filter(([name, v]) => name.startsWith('ATTR_') && typeof v === 'string')
  .map(([, v]) => v as string);

/** Number of {@link SCHEMA_ATTRIBUTE_KEYS}. */
export const SCHEMA_KEY_COUNT = SCHEMA_ATTRIBUTE_KEYS.length;

const INDEX = new Map(SCHEMA_ATTRIBUTE_KEYS.map((k, i) => [k, i]));

/** The index of `key` in {@link SCHEMA_ATTRIBUTE_KEYS}, or -1. */
export function schemaKeyIndex(key: string): number {
  return INDEX.get(key) ?? -1;
}
