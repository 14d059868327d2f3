import { Registry, type Metric, type RegistryContentType } from 'prom-client';

/** A rendered scrape: the body and the Content-Type to answer it with. */
export interface RenderedMetrics {
  contentType: string;
  body: string;
}

/**
 * True when the `Accept` header prefers OpenMetrics (`application/openmetrics-text`) at least as
 * much as the Prometheus text format. Prometheus itself sends OpenMetrics first with a higher q.
 * A wildcard alone means text: exemplars are opt-in.
 */
export function acceptsOpenMetrics(accept: string | undefined): boolean {
  if (!accept) return false;
  let om = 0;
  let text = 0;
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    let q = 1;
    let version: string | undefined;
    for (const p of params) {
      const [k, v] = p.split('=').map((s) => s.trim());
      if (k === 'q') q = Number(v);
      else if (k === 'version') version = v;
    }
    if (!Number.isFinite(q)) continue;
    if (type === 'application/openmetrics-text' && (version === undefined || version.startsWith('1.') || version === '0.0.1')) {
      om = Math.max(om, q);
    } else if (type === 'text/plain' || type === 'text/*' || type === '*/*') {
      text = Math.max(text, q);
    }
  }
  return om > 0 && om >= text;
}

/**
 * Renders `registry` as Prometheus text 0.0.4 (no exemplars) or, when `accept` asks for it,
 * OpenMetrics 1.0.0 with exemplars.
 *
 * Never calls `registry.metrics()` with the OpenMetrics content type: prom-client 15 renames
 * every counter in place (drops `_total` from `metric.name`) when it renders OpenMetrics, which
 * would break every later Prometheus-format scrape. Each render instead goes through a throwaway
 * registry of read-only views onto the real metrics.
 */
export async function renderMetrics(registry: Registry<RegistryContentType>, accept?: string): Promise<RenderedMetrics> {
  const contentType = acceptsOpenMetrics(accept) ? Registry.OPENMETRICS_CONTENT_TYPE : Registry.PROMETHEUS_CONTENT_TYPE;
  const view = new Registry<RegistryContentType>();
  view.setContentType(contentType);
  const om = contentType === Registry.OPENMETRICS_CONTENT_TYPE;
  for (const m of registry.getMetricsAsArray()) {
    // At runtime these are the metric instances; the typings only promise the plain fields.
    const metric = m as unknown as { name: string; type: string; help: string; get(): Promise<object> };
    // OpenMetrics names a counter family without `_total` and prom-client appends it per sample.
    const name = om && metric.type === 'counter' ? metric.name.replace(/_total$/, '') : metric.name;
    const proxy = {
      name,
      type: metric.type,
      help: metric.help,
      async get() {
        const data = await metric.get();
        return { ...data, name };
      },
    };
    view.registerMetric(proxy as unknown as Metric);
  }
  return { contentType, body: await view.metrics() };
}
