import { describeText, MessageScanner, type JsonRpcInfo } from './building-blocks.js';
import { isBatch } from './event-info.js';

const NONE: readonly JsonRpcInfo[] = [];

/** No bound of its own: {@link describeBody} checks the caller's. */
const scanner = new MessageScanner(Number.MAX_SAFE_INTEGER, true);

/**
 * What describeText says of a POST body (its messages: kind, id, method, progress token, tool
 * name), a single message read by the scanner in one pass: JSON.parse built every call's whole
 * body (its arguments too) to read those five. A batch goes to describeText. Fresh objects: the
 * pending requests keep them.
 */
export function describeBody(text: string, maxChars: number): JsonRpcInfo[] {
  if (text.length === 0 || text.length > maxChars) return [{ kind: 'none' }];
  if (isBatch(text, 0, text.length)) return describeText(text, maxChars);
  const m = scanner.scan(text);
  const info: JsonRpcInfo = { kind: m.kind };
  if (m.id !== undefined) info.id = m.id;
  if (m.method !== undefined) info.method = m.method;
  if (m.progressToken !== undefined) info.progressToken = m.progressToken;
  if (m.toolName !== undefined) info.toolName = m.toolName;
  return [info];
}

/**
 * A POST body's bounded copy, kept while the body is forwarded as it comes, to read its JSON-RPC
 * messages (ids, methods, cancels) once. Past `maxBytes` nothing is kept and nothing is read.
 */
export class RequestBody {
  private chunks: Buffer[] | undefined = [];
  private bytes = 0;
  private read: readonly JsonRpcInfo[] | undefined;
  /** The body's text once {@link infos} read it (undefined: none, or over the bound). */
  text: string | undefined;

  /** @param maxBytes the bound of the copy (`--max-parse-bytes`) */
  constructor(private readonly maxBytes: number) {}

  /** A chunk of the body went upstream. */
  push(chunk: Buffer): void {
    if (this.chunks === undefined) return;
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) this.chunks = undefined;
    else this.chunks.push(chunk);
  }

  /** The body's messages, described the first time asked (what came so far) and the copy let go. */
  infos(): readonly JsonRpcInfo[] {
    if (this.read === undefined) {
      const c = this.chunks;
      // Most bodies come in one chunk: decoded as it is, not copied into a new Buffer first.
      this.text = c === undefined ? undefined : (c.length === 1 ? c[0]! : Buffer.concat(c)).toString('utf8');
      this.read = this.text === undefined ? NONE : describeBody(this.text, this.maxBytes);
    }
    this.chunks = undefined;
    return this.read;
  }
}
