/**
 * Child of `npm run bench -- sidecar`: a minimal OTLP/HTTP sink in a process of its own, where the
 * proxies export as deployed (real exporter, real socket). Counts export requests, bytes and
 * spans (protobuf decoded); answers `GET /counts` with them as JSON. Prints `PORT n`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeProtobuf } from '../../src/otlp/decode-protobuf.js';

const counts = { requests: 0, bytes: 0, spans: 0 };
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
      counts.spans += decodeProtobuf(body).total;
    } catch {
      // Not protobuf: counted in bytes only.
    }
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
server.listen(0, '127.0.0.1', () => console.log(`PORT ${(server.address() as AddressInfo).port}`));
process.once('SIGTERM', () => process.exit(0));
