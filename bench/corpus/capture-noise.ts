import { seededRandom } from './seeded-random.js';

/** The perturbations of a capture, as probabilities and a clock skew. */
export interface NoiseOptions {
  /** Probability each span is lost. Default 0 (env `CORPUS_NOISE_DROP`). */
  drop: number;
  /** One service's clock is off by up to this many ms, either way. Default 5000 (env `CORPUS_NOISE_SKEW_MS`). */
  skewMs: number;
  /** Probability each span is delivered twice. Default 0.05 (env `CORPUS_NOISE_DUPLICATE`). */
  duplicate: number;
}

/** Noise knobs from the environment, with the defaults above. Bad values are an error. */
export function noiseFromEnv(env: NodeJS.ProcessEnv = process.env): NoiseOptions {
  const num = (name: string, dflt: number, max: number): number => {
    const v = env[name];
    if (v === undefined || v === '') return dflt;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0 || n > max) throw new Error(`${name}: a number in [0, ${max}], got ${JSON.stringify(v)}`);
    return n;
  };
  return { drop: num('CORPUS_NOISE_DROP', 0, 1), skewMs: num('CORPUS_NOISE_SKEW_MS', 5000, 3_600_000), duplicate: num('CORPUS_NOISE_DUPLICATE', 0.05, 1) };
}

interface Resource {
  resource?: { attributes?: Array<{ key: string; value: { stringValue?: string } }> };
  scopeSpans: Array<{ scope?: unknown; spans: Array<Record<string, unknown>> }>;
}
interface Unit {
  resource: Resource['resource'];
  scope: unknown;
  span: Record<string, unknown>;
}

/**
 * A seeded perturbation of an OTLP JSON capture, as a collector pipeline might deliver it: spans
 * lost (`drop`), one service's clock skewed, spans duplicated, then every span shuffled and cut
 * into batches of 1..8 (one batch sometimes delivered twice). Returns new lines; never edits a
 * span's content other than its times.
 */
export function perturbCapture(lines: readonly string[], seed: number, opts: NoiseOptions): string[] {
  const rnd = seededRandom(seed);
  const units: Unit[] = [];
  for (const line of lines) {
    const req = JSON.parse(line) as { resourceSpans?: Resource[] };
    for (const rs of req.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) for (const span of ss.spans ?? []) units.push({ resource: rs.resource, scope: ss.scope, span });
  }
  const services = [...new Set(units.map(serviceOf))].sort();
  const skewed = services[Math.floor(rnd() * services.length)];
  const skewNs = BigInt(Math.round((rnd() * 2 - 1) * opts.skewMs)) * 1_000_000n;
  const out: Unit[] = [];
  for (const u of units) {
    if (rnd() < opts.drop) continue;
    const span = serviceOf(u) === skewed ? shift(u.span, skewNs) : u.span;
    out.push({ ...u, span });
    if (rnd() < opts.duplicate) out.push({ ...u, span: { ...span } });
  }
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  const batches: Unit[][] = [];
  for (let i = 0; i < out.length; ) {
    const n = 1 + Math.floor(rnd() * 8);
    batches.push(out.slice(i, i + n));
    i += n;
  }
  if (batches.length > 0 && rnd() < 0.3) batches.push(batches[Math.floor(rnd() * batches.length)]!);
  return batches.map((b) => JSON.stringify({ resourceSpans: b.map((u) => ({ resource: u.resource, scopeSpans: [{ scope: u.scope, spans: [u.span] }] })) }));
}

function serviceOf(u: Unit): string {
  return u.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
}

function shift(span: Record<string, unknown>, ns: bigint): Record<string, unknown> {
  const add = (v: unknown): unknown => (typeof v === 'string' || typeof v === 'number' ? String(BigInt(v) + ns) : v);
  const out: Record<string, unknown> = { ...span, startTimeUnixNano: add(span.startTimeUnixNano), endTimeUnixNano: add(span.endTimeUnixNano) };
  if (Array.isArray(span.events)) out.events = (span.events as Array<Record<string, unknown>>).map((e) => ({ ...e, timeUnixNano: add(e.timeUnixNano) }));
  return out;
}
