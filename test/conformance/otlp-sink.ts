import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { decodeJson } from '../../src/otlp/decode-json.js';
import { decodeProtobuf } from '../../src/otlp/decode-protobuf.js';
import type { SpanRecord } from '../../src/model/span-record.js';

/** One OTLP/HTTP export request as received: kept to replay into a detector. */
export interface ReceivedExport {
  contentType: string;
  body: Buffer;
}

/**
 * A real OTLP/HTTP trace sink on 127.0.0.1, port 0: decodes every export (protobuf or JSON, as the
 * detector does) into span records, counts spans the decoder rejected (e.g. no valid
 * `forkwatch.side`), and keeps the raw bodies.
 */
export class OtlpSink {
  readonly spans: SpanRecord[] = [];
  readonly exports: ReceivedExport[] = [];
  rejected = 0;
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        try {
          let body = Buffer.concat(chunks);
          if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
          const contentType = String(req.headers['content-type'] ?? '');
          const r = contentType.includes('json') ? decodeJson(body) : decodeProtobuf(body);
          this.spans.push(...r.spans);
          this.rejected += r.rejected;
          this.exports.push({ contentType, body });
          res.writeHead(200, { 'content-type': contentType.includes('json') ? 'application/json' : 'application/x-protobuf' });
          res.end(contentType.includes('json') ? '{}' : undefined);
        } catch (err) {
          res.writeHead(400).end(String(err));
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  /** Forgets what was received (between scenarios). */
  reset(): void {
    this.spans.length = 0;
    this.exports.length = 0;
    this.rejected = 0;
  }

  async stop(): Promise<void> {
    if (this.server) await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}
