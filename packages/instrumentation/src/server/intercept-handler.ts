import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** Marks a transport already observed, so observing it twice is harmless. */
export const OBSERVED = Symbol.for('forkwatch.server.observed');

/**
 * True only when the SDK transport positively has no event store: its SSE frames then carry no
 * `id:` (the SDK numbers events only through the store), so there is nothing to record from them
 * and parsing every response body would be pure overhead. Any unknown shape answers false.
 */
export function lacksEventStore(transport: StreamableHTTPServerTransport): boolean {
  try {
    const inner = (transport as unknown as { _webStandardTransport?: unknown })._webStandardTransport;
    const holder = inner !== null && typeof inner === 'object' ? inner : transport;
    return '_eventStore' in holder && (holder as { _eventStore?: unknown })._eventStore === undefined;
  } catch {
    return false;
  }
}

/**
 * Makes `name` on the instance an accessor that wraps whatever handler is assigned (the SDK's
 * Protocol assigns onmessage/onclose in connect()). Reads return what the host assigned.
 */
export function interceptHandler(
  transport: StreamableHTTPServerTransport,
  name: 'onmessage' | 'onclose',
  wrap: (h: (...a: any[]) => unknown) => (...a: any[]) => unknown,
): void {
  let desc: PropertyDescriptor | undefined;
  for (let p = Object.getPrototypeOf(transport) as object | null; p && !desc; p = Object.getPrototypeOf(p) as object | null) {
    desc = Object.getOwnPropertyDescriptor(p, name);
  }
  const setter = desc?.set;
  const own = Object.getOwnPropertyDescriptor(transport, name);
  let current: unknown = own ? (own.get ? own.get.call(transport) : own.value) : desc?.get?.call(transport);
  let wrapped: unknown;
  const install = (h: unknown): void => {
    current = h;
    wrapped = typeof h === 'function' ? wrap(h as (...a: any[]) => unknown) : h;
    if (setter) setter.call(transport, wrapped);
  };
  install(current);
  Object.defineProperty(transport, name, {
    configurable: true,
    enumerable: true,
    // With an upstream setter the inner transport calls the wrapped handler itself; without
    // one (a plain field) callers invoke what they read, so they must read the wrapped one.
    get: () => (setter ? current : wrapped),
    set: (h: unknown) => install(h),
  });
}
