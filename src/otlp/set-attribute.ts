import type { AttrValue } from '../model/span-record.js';

/**
 * Sets an attribute on a plain object; a hostile `__proto__` key becomes an own property instead
 * of replacing the prototype.
 */
export function setAttribute(attrs: Record<string, AttrValue>, key: string, value: AttrValue): void {
  if (key === '__proto__') {
    Object.defineProperty(attrs, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    attrs[key] = value;
  }
}
