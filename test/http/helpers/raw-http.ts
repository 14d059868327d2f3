import { connect } from 'node:net';

/** The status code and raw text of one HTTP/1.1 answer. */
export interface RawAnswer {
  status: number;
  text: string;
}

/**
 * Sends `head` (request line and headers, without the blank line) and `body` over a fresh socket,
 * exactly as written: no client normalizes the request target. Resolves with the status once the
 * server closes the connection (`Connection: close` is added).
 */
export function rawRequest(port: number, head: string, body = '', timeoutMs = 10_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms to ${head.split('\r\n', 1)[0]!.slice(0, 120)}`));
    }, timeoutMs);
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    sock.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (!m) return reject(new Error(`no status line in ${JSON.stringify(text.slice(0, 200))}`));
      resolve({ status: Number(m[1]), text });
    });
    sock.write(`${head}\r\nConnection: close\r\n\r\n${body}`);
  });
}
