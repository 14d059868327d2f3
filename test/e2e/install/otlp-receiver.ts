import { createServer, type Server } from 'node:http';

/** One span as the receiver keeps it. */
export interface ReceivedSpan {
  service: string;
  name: string;
  /** Hex; empty for a root span. */
  parentSpanId: string;
  attributes: Record<string, unknown>;
}

/** A small OTLP/HTTP JSON receiver (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`): keeps every span it is sent. */
export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  of(service: string): ReceivedSpan[];
  /** Polls (every 50 ms, up to `ms`) until `cond` holds for `service`'s spans; returns them either way. */
  waitFor(service: string, cond: (spans: ReceivedSpan[]) => boolean, ms?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

function valueOf(v: AnyValue): unknown {
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue;
}

function attrs(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) out[kv.key] = valueOf(kv.value ?? {});
  return out;
}

/** Starts the receiver on 127.0.0.1, port 0. Non-trace signals are accepted and dropped. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: Array<{ name: string; parentSpanId?: string; attributes?: KeyValue[] }> }> }>;
          };
          for (const rs of body.resourceSpans ?? []) {
            const service = String(attrs(rs.resource?.attributes)['service.name'] ?? '');
            for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) spans.push({ service, name: s.name, parentSpanId: s.parentSpanId ?? '', attributes: attrs(s.attributes) });
          }
        } catch {
          res.writeHead(400).end();
          return;
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const of = (service: string): ReceivedSpan[] => spans.filter((s) => s.service === service);
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    of,
    async waitFor(service, cond, ms = 15_000) {
      const until = Date.now() + ms;
      while (!cond(of(service)) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      return of(service);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
