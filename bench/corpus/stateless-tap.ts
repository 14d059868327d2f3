import { describeText, type JsonRpcInfo } from '@forkwatch/instrumentation/wire';
import type { FetchLike } from '../../src/demo/fetch-types.js';
import { requestMethod } from '../../src/demo/fetch-types.js';
import { rewriteSseResponse } from '../../src/demo/sse-rewrite.js';

/** One JSON-RPC message on the wire, as the client's network layer sent or received it. */
export interface StatelessWireMessage {
  /** `sent`: in a request body; `received`: in a response body (SSE event or JSON). */
  dir: 'sent' | 'received';
  info: JsonRpcInfo;
  /** Index of the HTTP exchange that carried it. */
  exchange: number;
  /** ms since the tap was made. */
  at: number;
}

export interface StatelessWireTap {
  fetch: FetchLike;
  messages: StatelessWireMessage[];
  /** HTTP status of each exchange, in order (0: the request failed before any answer). */
  statuses: number[];
  /** Requests sent and not yet answered with headers (the SDK's `notifications/cancelled` POST, say). */
  inflight: number;
}

/**
 * The stateless counterpart of src/demo/wire-tap.ts, right above the network: every JSON-RPC
 * message the client POSTs and every one it receives (SSE events carry no ids on a stateless
 * server, so the sessionful tap's id-bearing events would be empty). Bytes pass unchanged.
 */
export function statelessWireTap(inner: FetchLike): StatelessWireTap {
  const t0 = Date.now();
  const tap: StatelessWireTap = {
    messages: [],
    statuses: [],
    inflight: 0,
    fetch: async (input, init) => {
      const exchange = tap.statuses.length;
      tap.statuses.push(0);
      const note = (dir: StatelessWireMessage['dir'], text: string): void => {
        for (const info of describeText(text)) tap.messages.push({ dir, info, exchange, at: Date.now() - t0 });
      };
      if (requestMethod(input, init) === 'POST' && typeof init?.body === 'string') note('sent', init.body);
      tap.inflight++;
      let res: Response;
      try {
        res = await inner(input, init);
      } finally {
        tap.inflight--;
      }
      tap.statuses[exchange] = res.status;
      if ((res.headers.get('content-type') ?? '').includes('application/json')) {
        void res.clone().text().then((t) => note('received', t), () => {});
        return res;
      }
      return rewriteSseResponse(res, (ev) => {
        note('received', ev.data);
        return true;
      });
    },
  };
  return tap;
}
