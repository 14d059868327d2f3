import { pathToFileURL } from 'node:url';
import { decodeJson } from '../src/otlp/decode-json.js';
import { decodeProtobuf } from '../src/otlp/decode-protobuf.js';
import { otlpType } from '../test/otlp/otlp-reflection.js';
import { makeSdkSpans, mixedSpecs, serialize } from '../test/otlp/sdk-spans.js';

/**
 * A realistic OTLP batch made by the real SDK and serialized by its own serializers:
 * `forkwatchRatio` of the spans are forkwatch spans (sse.event / request.settled with their
 * attributes), the rest HTTP server spans with ten typical attributes.
 */
export function makeBatch(opts: { spans: number; forkwatchRatio: number }): { protobuf: Uint8Array; json: string } {
  return serialize(makeSdkSpans(mixedSpecs(opts.spans, opts.forkwatchRatio)));
}

/** Runs `fn` repeatedly for about `ms` milliseconds (after a warm-up) and returns runs per second. */
function rate(fn: () => unknown, ms: number): number {
  const warmUntil = performance.now() + ms / 4;
  while (performance.now() < warmUntil) fn();
  let runs = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < ms) {
    fn();
    runs++;
    t = performance.now();
  }
  return runs / ((t - t0) / 1000);
}

export interface DecodeBenchResult {
  name: string;
  spansPerSecond: number;
}

/**
 * Prints spans/s of the protobuf and JSON decoders on a 2,000-span batch with 20% forkwatch spans,
 * and of protobufjs's generic reflection decode of the same bytes for reference.
 * @param durationMs measuring time per decoder, milliseconds. Default 1500.
 */
export function benchDecode(durationMs = 1500): DecodeBenchResult[] {
  const spans = 2000;
  const batch = makeBatch({ spans, forkwatchRatio: 0.2 });
  const reqType = otlpType('ExportTraceServiceRequest');
  const results: DecodeBenchResult[] = [
    { name: 'forkwatch decodeProtobuf', spansPerSecond: rate(() => decodeProtobuf(batch.protobuf), durationMs) * spans },
    { name: 'forkwatch decodeJson', spansPerSecond: rate(() => decodeJson(batch.json), durationMs) * spans },
    { name: 'protobufjs reflection decode (reference)', spansPerSecond: rate(() => reqType.decode(batch.protobuf), durationMs) * spans },
  ];
  console.log(`OTLP decode, ${spans} spans/batch, 20% forkwatch (${batch.protobuf.length} B protobuf, ${batch.json.length} B JSON)`);
  for (const r of results) console.log(`  ${r.name.padEnd(42)} ${Math.round(r.spansPerSecond).toLocaleString('en-US').padStart(12)} spans/s`);
  return results;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) benchDecode();
