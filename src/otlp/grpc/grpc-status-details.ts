/**
 * `grpc-status-details-bin` for an overload answer: a serialized `google.rpc.Status` whose
 * `details` hold one `google.rpc.RetryInfo`. OTLP/gRPC exporters (the Collector's among them)
 * read `RetryInfo.retry_delay` as the back-off to wait before the retry; without it
 * `RESOURCE_EXHAUSTED` counts as permanent and the batch is dropped.
 */
export const GRPC_STATUS_DETAILS_KEY = 'grpc-status-details-bin';

const RETRY_INFO_TYPE_URL = 'type.googleapis.com/google.rpc.RetryInfo';

/**
 * Encodes `google.rpc.Status{code=1, message=2, details=3: Any{type_url=1, value=2:
 * RetryInfo{retry_delay=1: Duration{seconds=1}}}}`.
 * @param code the gRPC status code (also sent as `grpc-status`).
 * @param retryAfterSeconds whole seconds, as the HTTP receiver's `Retry-After`.
 */
export function encodeRetryStatus(code: number, message: string, retryAfterSeconds: number): Buffer {
  const duration = field(1, varint(Math.max(0, Math.trunc(retryAfterSeconds))), 0);
  const retryInfo = field(1, duration);
  const any = Buffer.concat([field(1, Buffer.from(RETRY_INFO_TYPE_URL)), field(2, retryInfo)]);
  return Buffer.concat([field(1, varint(code), 0), field(2, Buffer.from(message)), field(3, any)]);
}

/** Reads the retry delay (seconds) back out of {@link encodeRetryStatus}'s bytes; for tests and the bench. */
export function decodeRetryDelaySeconds(status: Uint8Array): number | undefined {
  const any = firstField(status, 3);
  const info = any && firstField(any, 2);
  const duration = info && firstField(info, 1);
  if (!duration) return undefined;
  let pos = 0;
  while (pos < duration.length) {
    const [tag, p1] = readVarint(duration, pos);
    const [v, p2] = readVarint(duration, p1);
    if (tag === (1 << 3)) return v;
    pos = p2;
  }
  return undefined;
}

/** Field `n`: length-delimited (wire type 2) by default, or varint (0) with `payload` already a varint. */
function field(n: number, payload: Buffer, wire: 0 | 2 = 2): Buffer {
  const key = varint((n << 3) | wire);
  return wire === 0 ? Buffer.concat([key, payload]) : Buffer.concat([key, varint(payload.length), payload]);
}

function varint(v: number): Buffer {
  const out: number[] = [];
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return Buffer.from(out);
}

function readVarint(buf: Uint8Array, pos: number): [number, number] {
  let v = 0;
  let mul = 1;
  for (;;) {
    if (pos >= buf.length) throw new RangeError('truncated varint');
    const b = buf[pos++]!;
    v += (b & 0x7f) * mul;
    if (b < 0x80) return [v, pos];
    mul *= 0x80;
  }
}

/** The first length-delimited field `n` of a message, skipping varints; enough for the shapes above. */
function firstField(buf: Uint8Array, n: number): Uint8Array | undefined {
  let pos = 0;
  while (pos < buf.length) {
    const [tag, p1] = readVarint(buf, pos);
    if ((tag & 7) === 0) {
      pos = readVarint(buf, p1)[1];
      continue;
    }
    if ((tag & 7) !== 2) return undefined;
    const [len, p2] = readVarint(buf, p1);
    if (tag >>> 3 === n) return buf.subarray(p2, p2 + len);
    pos = p2 + len;
  }
  return undefined;
}
