import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Events a CounterEventStore keeps before dropping its oldest. Default 1024. */
export const DEFAULT_COUNTER_STORE_MAX_EVENTS = 1024;

interface StoredEvent {
  id: string;
  streamId: string;
  message: JSONRPCMessage;
}

/**
 * The event store many apps write: one per transport, ids `e1, e2, ...` from a plain counter that
 * restarts at `e1` for every new store. Deliberately naive in the way the seed's server was:
 * asked to replay after an id it does not know, it replays its whole log from the start instead of
 * refusing. Bounded to `maxEvents` (oldest dropped).
 */
export class CounterEventStore implements EventStore {
  private seq = 0;
  private readonly log: StoredEvent[] = [];

  /**
   * @param onStore called after each event is stored (the server's idle reaper counts it as activity).
   * @param maxEvents bound on the log, default {@link DEFAULT_COUNTER_STORE_MAX_EVENTS}.
   */
  constructor(
    private readonly onStore?: (id: string, message: JSONRPCMessage) => void,
    private readonly maxEvents = DEFAULT_COUNTER_STORE_MAX_EVENTS,
  ) {}

  /** Events currently in the log. */
  get size(): number {
    return this.log.length;
  }

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `e${++this.seq}`;
    this.log.push({ id, streamId, message });
    if (this.log.length > this.maxEvents) this.log.shift();
    this.onStore?.(id, message);
    return id;
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const at = this.log.findIndex((e) => e.id === lastEventId);
    if (at < 0) {
      // The naive part: an unknown cursor replays everything, whatever stream it belonged to.
      for (const e of this.log) await send(e.id, e.message);
      return '';
    }
    const streamId = this.log[at]!.streamId;
    for (const e of this.log.slice(at + 1)) {
      if (e.streamId === streamId) await send(e.id, e.message);
    }
    return streamId;
  }
}
