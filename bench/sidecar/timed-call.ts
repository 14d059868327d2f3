import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { clock } from './transit-clock.js';

/** One call of the latency phase, ms: the whole call, the request's way in, each message's way out. */
export interface TimedCall {
  callMs: number;
  /** Client to the server's tool handler (the proxy's request path, the SDK's parse on both ends). */
  requestMs: number;
  /** Each progress notification's, then the answer's: from the server's send to the client's handler. */
  messageMs: number[];
}

/**
 * A `progress` call to bench/sidecar/upstream-main.ts with `sentAt`: its notifications and answer
 * say when they left the server, so each transit is read on its own rather than inside the call's
 * time, whose tail is the client's and the server's (their collectors, the SDK). Throws when an
 * answer or a notification is missing: the phase pairs messages call by call, variant by variant.
 */
export async function timedCall(client: Client, n: number): Promise<TimedCall> {
  const messageMs: number[] = [];
  const t0 = clock();
  const r = await client.callTool({ name: 'progress', arguments: { n, sentAt: t0 } }, undefined, {
    onprogress: (p) => void messageMs.push(clock() - Number(p.message)),
  });
  const end = clock();
  const text = (r.content as { type: string; text?: string }[])[0]?.text ?? '';
  const [, , requestMs, leftAt] = text.split(' ');
  messageMs.push(end - Number(leftAt));
  // A message without its stamp (NaN) is as missing as one that never came.
  if (r.isError || Number.isNaN(Number(requestMs)) || messageMs.length !== n + 1 || messageMs.some(Number.isNaN)) {
    throw new Error(`timed call: ${messageMs.length - 1} of ${n} notifications, answer ${JSON.stringify(text)}`);
  }
  return { callMs: end - t0, requestMs: Number(requestMs), messageMs };
}
