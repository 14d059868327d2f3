import type { IncomingMessage, ServerResponse } from 'node:http';
import { describeText, type JsonRpcInfo } from './building-blocks.js';
import type { IdleBound } from './idle-bound.js';

/**
 * Passes an answer that is not an SSE stream to the client as it comes, with backpressure. When
 * `parseJson` (a JSON answer to a POST), a copy of up to `maxParseBytes` is kept and its JSON-RPC
 * messages handed to `onEnd` once the answer ended (none past the bound); else `onEnd([])`.
 */
export function passPlain(
  ures: IncomingMessage,
  res: ServerResponse,
  status: number,
  headers: string[],
  parseJson: boolean,
  maxParseBytes: number,
  idle: IdleBound,
  onEnd: (infos: readonly JsonRpcInfo[]) => void,
): void {
  res.writeHead(status, headers);
  let body: Buffer[] | undefined = parseJson ? [] : undefined;
  let size = 0;
  ures.on('data', (c: Buffer) => {
    idle.touch();
    if (!res.write(c)) ures.pause();
    if (body === undefined) return;
    size += c.length;
    if (size > maxParseBytes) body = undefined;
    else body.push(c);
  });
  res.on('drain', () => ures.resume());
  ures.on('end', () => {
    const infos = body !== undefined ? describeText(Buffer.concat(body).toString('utf8'), maxParseBytes) : [];
    res.end();
    onEnd(infos);
  });
}
