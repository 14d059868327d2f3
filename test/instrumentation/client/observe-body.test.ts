import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { observeBodyInPlace, type BodyObserver } from '../../../packages/instrumentation/src/client/observe-body.js';

const CHUNKS = ['data: é', 'té\n\nid: 1\n', 'data: {"a":1}\n\n'];

function source(): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(CHUNKS.join(''));
  // Split inside the two-byte 'é' so decoding must carry state across chunks.
  const parts = [bytes.subarray(0, 7), bytes.subarray(7, 12), bytes.subarray(12)];
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(p);
      c.close();
    },
  });
}

function recorder(): BodyObserver & { text_: string; ended: number } {
  const r = {
    text_: '',
    ended: 0,
    text(t: string) {
      r.text_ += t;
    },
    end() {
      r.ended++;
    },
  };
  return r;
}

async function drain(s: ReadableStream<unknown>): Promise<string> {
  let out = '';
  const dec = new TextDecoder();
  for await (const c of s as unknown as AsyncIterable<unknown>) out += typeof c === 'string' ? c : dec.decode(c as Uint8Array, { stream: true });
  return out + dec.decode();
}

describe('observeBodyInPlace', () => {
  it('reads the text through the consumer’s own TextDecoderStream, with no stream of its own where Node allows', async (t) => {
    const body = source();
    const rec = recorder();
    observeBodyInPlace(body, rec);
    const decoder = new TextDecoderStream();
    const out = await drain(body.pipeThrough(decoder));
    assert.equal(out, CHUNKS.join(''));
    assert.equal(rec.text_, CHUNKS.join(''));
    assert.equal(rec.ended, 1);
    assert.ok(!Object.prototype.hasOwnProperty.call(body, 'pipeThrough'), 'hooks removed at the first read');
    const handle = Object.getOwnPropertySymbols(decoder)
      .map((s) => (decoder as unknown as Record<symbol, unknown>)[s])
      .find((v) => v instanceof TextDecoder);
    if (handle !== undefined) {
      // Node 20 keeps the decoder under an own symbol: the fast path must have been taken.
      assert.ok(Object.prototype.hasOwnProperty.call(handle, 'decode'), 'the decoder itself reported the text');
    } else {
      // Node 24 keeps it in a private field: the pass-through stream did the observing, as checked above.
      t.diagnostic('TextDecoderStream keeps its decoder private here: fallback path');
    }
  });

  it('falls back to a pass-through stream for other readers, bytes unchanged', async () => {
    for (const read of [
      (b: ReadableStream<Uint8Array>) => drain(b.pipeThrough(new TransformStream())),
      (b: ReadableStream<Uint8Array>) => drain(b),
      async (b: ReadableStream<Uint8Array>) => {
        const r = b.getReader();
        const parts: Uint8Array[] = [];
        for (let x = await r.read(); !x.done; x = await r.read()) parts.push(x.value);
        return new TextDecoder().decode(Buffer.concat(parts));
      },
      (b: ReadableStream<Uint8Array>) => new Response(b).text(),
    ]) {
      const body = source();
      const rec = recorder();
      observeBodyInPlace(body, rec);
      assert.equal(await read(body), CHUNKS.join(''));
      assert.equal(rec.text_, CHUNKS.join(''));
      assert.equal(rec.ended, 1);
    }
  });

  it('an observer that throws never breaks the consumer', async () => {
    const body = source();
    observeBodyInPlace(body, {
      text() {
        throw new Error('observer bug');
      },
      end() {
        throw new Error('observer bug');
      },
    });
    assert.equal(await drain(body.pipeThrough(new TextDecoderStream())), CHUNKS.join(''));
  });
});
