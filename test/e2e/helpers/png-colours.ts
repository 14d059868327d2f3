import { inflateSync } from 'node:zlib';

export interface PngStats {
  width: number;
  height: number;
  /** Distinct RGB colours among the pixels. */
  colours: number;
  /** Share of pixels (0..1) that differ from the most common colour. */
  nonBackground: number;
}

/**
 * Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium's screenshots are) and counts
 * its colours: enough to tell a drawn page from a blank or single-colour one, with no image
 * library.
 */
export function pngStats(png: Buffer): PngStats {
  if (png.readUInt32BE(0) !== 0x89504e47) throw new Error('not a PNG');
  let pos = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (pos < png.length) {
    const len = png.readUInt32BE(pos);
    const type = png.toString('latin1', pos + 4, pos + 8);
    const data = png.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const depth = data[8];
      const colourType = data[9];
      if (depth !== 8 || (colourType !== 2 && colourType !== 6) || data[12] !== 0) throw new Error(`unsupported PNG (depth ${depth}, colour type ${colourType}, interlace ${data[12]})`);
      channels = colourType === 6 ? 4 : 3;
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    pos += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const prev = Buffer.alloc(stride);
  const cur = Buffer.alloc(stride);
  const counts = new Map<number, number>();
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? cur[i - channels]! : 0;
      const b = prev[i]!;
      const c = i >= channels ? prev[i - channels]! : 0;
      let v = line[i]!;
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      cur[i] = v & 0xff;
    }
    for (let x = 0; x < width; x++) {
      const o = x * channels;
      const rgb = (cur[o]! << 16) | (cur[o + 1]! << 8) | cur[o + 2]!;
      counts.set(rgb, (counts.get(rgb) ?? 0) + 1);
    }
    cur.copy(prev);
  }
  const top = Math.max(...counts.values());
  return { width, height, colours: counts.size, nonBackground: 1 - top / (width * height) };
}
