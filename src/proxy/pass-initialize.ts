import type { IncomingMessage, ServerResponse } from 'node:http';
import { writeJsonRpcError } from './building-blocks.js';
import { headerOf, withHeader } from './forward-headers.js';
import { sseWithIncarnationMeta, withIncarnationMeta } from './initialize-meta.js';

/** JSON-RPC code of the answer to an `initialize` whose answer passed `maxInitializeBytes`. */
const JSONRPC_INTERNAL_ERROR = -32603;

/**
 * Under `--guard`: the initialize answer, read whole up to `maxBytes`, with the incarnation added
 * to `_meta` and `content-length` set anew (`headers`: the raw list to answer with). Past `maxBytes` (a huge or endless answer) the
 * upstream answer is dropped and the client gets `502` with a JSON-RPC error naming
 * `--max-initialize-bytes`: it is never held whole, nor streamed on without the incarnation, so
 * the proxy's memory for it stays under `maxBytes` whatever the upstream and the client do (the
 * rewritten answer is at most `maxBytes` plus the `_meta` added, written once). `done` gets the
 * body as the upstream sent it ('' when it was refused).
 */
export function passInitialize(
  maxBytes: number,
  ures: IncomingMessage,
  res: ServerResponse,
  status: number,
  headers: string[],
  sse: boolean,
  incarnation: string,
  done: (original: string) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  const declared = Number(headerOf(ures.rawHeaders, 'content-length'));
  const refuse = (): void => {
    refused = true;
    chunks.length = 0;
    // Read no further (the upstream is held by backpressure), and drop it once the error is out:
    // dropping it first would let its close handlers cut the client's answer short.
    ures.pause();
    res.once('finish', () => ures.destroy());
    writeJsonRpcError(res, 502, JSONRPC_INTERNAL_ERROR, 'Upstream initialize answer too large', {
      reason: `forkwatch proxy: the initialize answer passed --max-initialize-bytes (${maxBytes} bytes); under --guard it is held whole to add the incarnation`,
    });
    done('');
  };
  if (Number.isFinite(declared) && declared > maxBytes) {
    refuse();
    return;
  }
  ures.on('data', (c: Buffer) => {
    if (refused) return;
    size += c.length;
    chunks.push(c);
    if (size > maxBytes) refuse();
  });
  ures.on('end', () => {
    if (refused) return;
    const text = Buffer.concat(chunks).toString('utf8');
    const out = sse ? sseWithIncarnationMeta(text, incarnation) : (withIncarnationMeta(text, incarnation) ?? text);
    res.writeHead(status, withHeader(headers, 'content-length', String(Buffer.byteLength(out))));
    res.end(out);
    done(text);
  });
}
