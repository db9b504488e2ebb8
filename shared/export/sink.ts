// A growable byte buffer (a Node Buffer, for its fast UTF-8 and number writes) with the LEB128 varint both
// Parquet's RLE levels and Thrift's compact protocol use. Writers reach into `buf` and `pos` on hot paths:
// `ensure(n)` first, then write up to n bytes at `pos` and advance it.
export class Sink {
  buf: Buffer;
  pos = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }
  ensure(n: number) {
    if (this.pos + n > this.buf.length) this.grow(n);
  }
  private grow(n: number) {
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  /** Gives up the buffer (views of it stay valid) and starts a new one of the same capacity. */
  detach() {
    this.buf = Buffer.allocUnsafe(this.buf.length);
    this.pos = 0;
  }
  /** A copy of the bytes written so far. */
  copy(): Uint8Array {
    return new Uint8Array(this.buf.subarray(0, this.pos));
  }
  byte(b: number) {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }
  write(bytes: Uint8Array) {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }
  /** Unsigned LEB128 of a non-negative integer up to 2^53. */
  varint(n: number) {
    this.ensure(10);
    let v = n;
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
  }
}
