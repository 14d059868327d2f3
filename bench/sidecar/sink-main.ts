/**
 * Child of `npm run bench -- sidecar`: a minimal OTLP/HTTP sink in a process of its own, where the
 * proxies export as deployed (real exporter, real socket). Counts export requests, bytes and
 * spans (protobuf decoded), and among them `calls`: spans about calls and
 * events, any but what every client's connect and close export (its session's creation and end,
 * its `initialize`); answers `GET /counts` with them as JSON. Prints `PORT n`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeProtobuf } from '../../src/otlp/decode-protobuf.js';

const counts = { requests: 0, bytes: 0, spans: 0, calls: 0 };
const SESSION_SPANS = new Set(['forkwatch.session.created', 'forkwatch.session.ended']);
const server = createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    counts.requests++;
    counts.bytes += body.length;
    try {
      const decoded = decodeProtobuf(body);
      counts.spans += decoded.total;
      for (const sp of decoded.spans) {
        // Every session's `initialize` is reported at once (docs/instrumentation.md, requestSpanDelayMs): not a call's.
        if (SESSION_SPANS.has(sp.name) || sp.attributes['mcp.method.name'] === 'initialize') continue;
        counts.calls++;
      }
    } catch {
      // Not protobuf: counted in bytes only.
    }
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
server.listen(0, '127.0.0.1', () => console.log(`PORT ${(server.address() as AddressInfo).port}`));
process.once('SIGTERM', () => process.exit(0));
