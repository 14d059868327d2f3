import type { EventLookup } from './types.js';

/** What a session guard tells the instrumentation about a transport it created. Internal. */
export interface GuardLink {
  incarnation: string;
  lookup(eventId: string): EventLookup;
  streamIdOf(eventId: string): string | undefined;
}

/** transport -> its guard's session; a WeakMap so neither side keeps the other alive. */
export const guardLinks = new WeakMap<object, GuardLink>();
