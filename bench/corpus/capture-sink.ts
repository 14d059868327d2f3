import { createServer, type IncomingMessage, type Server } from 'node:http';

/** An OTLP/HTTP JSON endpoint that keeps every export request it is sent and forwards it on. */
export interface CaptureSink {
  /** OTLP/HTTP base URL (`…/v1/traces` is added by exporters). */
  url: string;
  /** Each export request received, one OTLP JSON `ExportTraceServiceRequest` per entry, in arrival order. */
  lines(): string[];
  close(): Promise<void>;
}

/**
 * The corpus's capture point: apps and `forkwatch proxy` processes export OTLP JSON here; each
 * body is kept as one line (the Collector file exporter's shape, what `forkwatch analyze` reads)
 * and forwarded to `forwardTo` (the live detector) when given, whose answer it returns.
 */
export async function startCaptureSink(forwardTo?: string): Promise<CaptureSink> {
  const kept: string[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      if (req.headers['content-type']?.includes('json') !== true) {
        // The corpus configures every exporter for JSON: anything else is a set-up mistake.
        res.writeHead(415).end();
        return;
      }
      kept.push(body.toString('utf8').replace(/\n/g, ''));
      if (forwardTo === undefined) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      const answer = await fetch(`${forwardTo}/v1/traces`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
        signal: AbortSignal.timeout(30_000),
      });
      const text = await answer.text();
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(503, { 'retry-after': '1' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    lines: () => [...kept],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
