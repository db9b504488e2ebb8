import type { Sink } from "../sink.ts";

// Definition and repetition levels in the RLE/bit-packed hybrid encoding (parquet-format Encodings.md), as
// a data page v1 holds them.

/** Levels [from, to) in the RLE/bit-packed hybrid, with data page v1's 4-byte length prefix. */
export function writeLevels(out: Sink, src: Uint8Array, from: number, to: number, width: number) {
  out.ensure(4);
  const lenAt = out.pos;
  out.pos += 4;
  let literal = from;
  let i = from;
  while (i < to) {
    const v = src[i]!;
    let j = i + 1;
    while (j < to && src[j] === v) j++;
    if (j - i >= 8) {
      // A bit-packed run before an RLE run must hold a multiple of 8 values: borrow them from the repeat.
      const pending = i - literal;
      const pad = (8 - (pending & 7)) & 7;
      if (pending > 0) {
        if (j - i - pad < 8) {
          i = j;
          continue;
        }
        bitPack(out, src, literal, i + pad, width);
      }
      out.varint((j - i - pad) * 2);
      out.ensure(1);
      out.buf[out.pos++] = v;
      literal = j;
    }
    i = j;
  }
  if (literal < to) bitPack(out, src, literal, to, width);
  out.buf.writeUInt32LE(out.pos - lenAt - 4, lenAt);
}

/** A bit-packed run of values [from, to), LSB first, the last group of 8 padded with zeros. */
function bitPack(out: Sink, src: Uint8Array, from: number, to: number, width: number) {
  const groups = Math.ceil((to - from) / 8);
  out.varint(groups * 2 + 1);
  out.ensure(groups * width);
  const buf = out.buf;
  for (let g = 0; g < groups; g++) {
    let acc = 0;
    const base = from + g * 8;
    for (let k = 0; k < 8; k++) {
      const idx = base + k;
      if (idx < to) acc |= src[idx]! << (k * width);
    }
    for (let b = 0; b < width; b++) buf[out.pos++] = (acc >>> (8 * b)) & 0xff;
  }
}
