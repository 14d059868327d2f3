import { StringDecoder } from 'node:string_decoder';

/**
 * The text of a body that comes as Buffer chunks, chunk by chunk, a character split across two
 * chunks decoded whole (as `StringDecoder` does). A chunk that ends in an ASCII byte (an SSE
 * chunk ends with its blank line) cannot end inside a character, so it is decoded on its own
 * while no bytes are pending; a `StringDecoder` (whose construction allocates a native buffer, on
 * every SSE answer the proxy passed) is made only at the first chunk that may end inside one,
 * and used from then on.
 */
export class ChunkText {
  private decoder: StringDecoder | undefined;

  /** True while no chunk needed the decoder: no bytes of a character are pending. */
  get clear(): boolean {
    return this.decoder === undefined;
  }

  /** The text of `chunk`, less any trailing bytes of a character its next chunk completes. */
  write(chunk: Buffer): string {
    if (this.decoder === undefined) {
      if (chunk.length === 0) return '';
      if (chunk[chunk.length - 1]! < 0x80) return chunk.toString('utf8');
      this.decoder = new StringDecoder('utf8');
    }
    return this.decoder.write(chunk);
  }

  /** What is left at the end of the body (an incomplete character as U+FFFD), '' when nothing. */
  end(): string {
    return this.decoder?.end() ?? '';
  }
}
