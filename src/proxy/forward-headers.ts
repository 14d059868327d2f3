/** Hop-by-hop headers (RFC 9110 7.6.1): they describe one connection and are not forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-authorization', 'proxy-authenticate']);
/** Their lengths: a name of another length is forwarded without being lowercased. */
const HOP_LENGTHS = new Set([...HOP_BY_HOP].map((h) => h.length));

/**
 * The headers to forward, as Node's raw list (`rawHeaders`: name, value, name, value...): all but
 * the hop-by-hop ones and those the `Connection` header names, names as sent and repeated headers
 * as separate lines. `host` is replaced by `hostOverride` when given (the upstream's, for virtual
 * hosting; added when the client sent none). `http.request` and `writeHead` take the list and write
 * it as it is: an object of headers (`req.headers`) is built name by name from the raw list, copied
 * key by key, and set again header by header, a per-call cost a bare pipe proxy pays in part only.
 */
export function forwardHeaders(raw: readonly string[], hostOverride?: string): string[] {
  const named = connectionNamed(raw);
  const out: string[] = [];
  let hostSet = false;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const n = name.length;
    if (HOP_LENGTHS.has(n) || named !== undefined || (n === 4 && hostOverride !== undefined)) {
      const lower = name.toLowerCase();
      if (HOP_BY_HOP.has(lower) || named?.has(lower)) continue;
      if (lower === 'host' && hostOverride !== undefined) {
        // The first one takes the upstream's host; a repeated one goes (one host per request).
        if (!hostSet) out.push(name, hostOverride);
        hostSet = true;
        continue;
      }
    }
    out.push(name, raw[i + 1]!);
  }
  if (hostOverride !== undefined && !hostSet) out.push('Host', hostOverride);
  return out;
}

/** The names the `Connection` header lists as hop-by-hop for this message (lowercase), undefined: none. */
function connectionNamed(raw: readonly string[]): Set<string> | undefined {
  let named: Set<string> | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.length !== 10 || raw[i]!.toLowerCase() !== 'connection') continue;
    for (const token of raw[i + 1]!.toLowerCase().split(',')) {
      const t = token.trim();
      if (t !== '' && t !== 'keep-alive' && t !== 'close') (named ??= new Set()).add(t);
    }
  }
  return named;
}

/**
 * The first value of header `name` (lowercase) in a raw list, or undefined: read without
 * building `req.headers` (Node builds that object, every header, on first access).
 */
export function headerOf(raw: readonly string[], name: string): string | undefined {
  const n = name.length;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i]!;
    if (k.length === n && (k === name || k.toLowerCase() === name)) return raw[i + 1];
  }
  return undefined;
}

/** The raw list without header `name` (lowercase), then with it set to `value`. */
export function withHeader(raw: readonly string[], name: string, value: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() !== name) out.push(raw[i]!, raw[i + 1]!);
  out.push(name, value);
  return out;
}
