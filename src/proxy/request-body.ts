import { describeText, type JsonRpcInfo } from './building-blocks.js';

const NONE: readonly JsonRpcInfo[] = [];

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
      this.read = this.text === undefined ? NONE : describeText(this.text, this.maxBytes);
    }
    this.chunks = undefined;
    return this.read;
  }
}
