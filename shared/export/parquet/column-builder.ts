import { Sink } from "../sink.ts";
import type { ParquetColumn } from "./columns.ts";
import { bool, float64, int64, listItems, TimestampReader, text } from "./values.ts";

// One column of the row group being filled. Values are encoded as rows arrive (PLAIN values; definition and
// repetition levels kept one byte each until a page is written), so the raw rows are not kept; the column
// notes where its pages end (~PAGE_BYTES of values each, cut at row boundaries) and its statistics.

/** A column chunk is cut into pages of about this many bytes of values (cut at row boundaries). */
export const PAGE_BYTES = 1 << 20;

/** A growable array of small integers (levels, booleans). */
class Bytes {
  a = new Uint8Array(1024);
  n = 0;
  push(v: number) {
    if (this.n === this.a.length) {
      const next = new Uint8Array(this.a.length * 2);
      next.set(this.a);
      this.a = next;
    }
    this.a[this.n++] = v;
  }
}

/** Buffer's UTF-8 writer without Buffer#write's argument handling (a hot path: most values are strings). */
const utf8Write: (this: Buffer, s: string, offset: number) => number =
  (Buffer.prototype as { utf8Write?: (this: Buffer, s: string, offset: number) => number }).utf8Write ??
  function (this: Buffer, s: string, offset: number) {
    return this.write(s, offset, "utf8");
  };
const TWO_32 = 2 ** 32;

export interface PageCut {
  levels: number;
  valueEnd: number;
}

export interface ChunkStats {
  nulls: number;
  min?: Uint8Array;
  max?: Uint8Array;
}

// What a builder does with a value, as small ints for a fast switch.
const K_TEXT = 0;
const K_LIST_TEXT = 1;
const K_LIST = 2;
const K_TIMESTAMP = 3;
const K_INT = 4;
const K_FLOAT = 5;
const K_BOOL = 6;

export class ColumnBuilder {
  readonly defs = new Bytes();
  readonly reps: Bytes | null;
  readonly values: Sink;
  /** BOOLEAN values, one byte each until the page is written (bit-packed then). */
  readonly bools: Bytes | null;
  readonly width: number;
  nulls = 0;
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;
  /** Set by NaN (DOUBLE) and by timestamps past 2^53 µs: the chunk gets no min/max statistics. */
  noMinMax = false;
  cuts: PageCut[] = [];
  private pageStart = 0;
  private readonly numeric: boolean;
  private readonly k: number;
  private pendingNull = true;
  private pendingStr = "";
  private pendingNum = 0;
  private pendingList: unknown[] | null = null;
  private pendingBig: bigint | null = null;
  /** Reads this column's timestamps (keeps the parts of the last one, for pendingBig). */
  private readonly times = new TimestampReader();

  constructor(readonly col: ParquetColumn) {
    this.reps = col.maxRepetitionLevel > 0 ? new Bytes() : null;
    this.bools = col.physicalType === "BOOLEAN" ? new Bytes() : null;
    this.values = new Sink(col.physicalType === "BYTE_ARRAY" ? 64 * 1024 : 8 * 1024);
    this.width = 32 - Math.clz32(col.maxDefinitionLevel);
    this.numeric = col.physicalType === "INT64" || col.physicalType === "DOUBLE";
    this.k = {
      string: K_TEXT,
      json: K_TEXT,
      list: this.reps ? K_LIST : K_LIST_TEXT,
      timestamp: K_TIMESTAMP,
      int: K_INT,
      float: K_FLOAT,
      bool: K_BOOL,
    }[col.kind];
  }

  /**
   * Checks and converts one row's value (may throw) into the pending fields, before any column of the row
   * is touched; commit() then appends it. (Plain fields, not a returned value: no boxing per value.)
   */
  prepare(v: unknown): void {
    if (v == null || (v === "" && this.k >= K_TIMESTAMP)) {
      this.pendingNull = true;
      return;
    }
    const field = this.col.field;
    switch (this.k) {
      case K_TEXT:
        this.pendingStr = typeof v === "string" ? v : text(v);
        break;
      case K_LIST_TEXT:
        this.pendingStr = typeof v === "string" ? v : JSON.stringify(v);
        break;
      case K_LIST:
        this.pendingList = Array.isArray(v) ? v : listItems(field, v);
        break;
      case K_TIMESTAMP: {
        const us = typeof v === "string" ? this.times.canonical(v) : Number.NaN;
        this.pendingNum = Number.isNaN(us) ? this.times.any(field, v) : us;
        this.pendingBig = Number.isSafeInteger(this.pendingNum) ? null : this.times.exact();
        break;
      }
      case K_INT:
        this.pendingNum = typeof v === "number" && Number.isSafeInteger(v) ? v : int64(field, v);
        break;
      case K_FLOAT:
        this.pendingNum = typeof v === "number" ? v : float64(field, v);
        break;
      case K_BOOL:
        this.pendingNum = (typeof v === "boolean" ? v : bool(field, v)) ? 1 : 0;
        break;
    }
    this.pendingNull = false;
  }

  /** Appends the prepared value, and starts a new page once this one holds PAGE_BYTES of values. */
  commit() {
    if (this.pendingNull) {
      this.defs.push(0);
      this.reps?.push(0);
      this.nulls++;
    } else {
      switch (this.k) {
        case K_TEXT:
        case K_LIST_TEXT:
          this.defs.push(1);
          this.string(this.pendingStr);
          this.pendingStr = "";
          break;
        case K_LIST:
          this.pushList(this.pendingList!);
          this.pendingList = null;
          break;
        case K_TIMESTAMP:
          this.defs.push(1);
          if (this.pendingBig === null) this.int64(this.pendingNum);
          else {
            const s = this.values;
            s.ensure(8);
            s.buf.writeBigInt64LE(this.pendingBig, s.pos);
            s.pos += 8;
            this.noMinMax = true; // min/max are kept as doubles; leave them out rather than round them
          }
          break;
        case K_INT:
          this.defs.push(1);
          this.int64(this.pendingNum);
          break;
        case K_FLOAT: {
          this.defs.push(1);
          const n = this.pendingNum;
          const s = this.values;
          s.ensure(8);
          s.buf.writeDoubleLE(n, s.pos);
          s.pos += 8;
          this.stat(n);
          break;
        }
        case K_BOOL:
          this.defs.push(1);
          this.bools!.push(this.pendingNum);
          break;
      }
    }
    this.pendingNull = true;
    const end = this.bools ? this.bools.n : this.values.pos;
    if (end - this.pageStart >= (this.bools ? PAGE_BYTES * 8 : PAGE_BYTES)) {
      this.cuts.push({ levels: this.defs.n, valueEnd: end });
      this.pageStart = end;
    }
  }

  /** Levels of one list: null (0), empty (1), null element (2), element (3). */
  private pushList(items: unknown[]) {
    const defs = this.defs;
    const reps = this.reps!;
    if (items.length === 0) {
      defs.push(1);
      reps.push(0);
      return;
    }
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      reps.push(i === 0 ? 0 : 1);
      if (item == null) defs.push(2);
      else {
        defs.push(3);
        this.string(typeof item === "string" ? item : text(item));
      }
    }
  }

  private string(str: string) {
    const s = this.values;
    const n = str.length;
    s.ensure(4 + n * 3);
    const buf = s.buf;
    const at = s.pos + 4;
    let len = 0;
    // Short ASCII strings are copied here; anything else goes to Buffer#write (native UTF-8).
    if (n <= 32) {
      while (len < n) {
        const c = str.charCodeAt(len);
        if (c >= 0x80) break;
        buf[at + len] = c;
        len++;
      }
      if (len < n) len = utf8Write.call(buf, str, at);
    } else len = utf8Write.call(buf, str, at);
    buf.writeUInt32LE(len, s.pos);
    s.pos = at + len;
  }

  private int64(n: number) {
    const s = this.values;
    s.ensure(8);
    const hi = Math.floor(n / TWO_32);
    s.buf.writeUInt32LE(n - hi * TWO_32, s.pos);
    s.buf.writeInt32LE(hi, s.pos + 4);
    s.pos += 8;
    this.stat(n);
  }

  private stat(n: number) {
    if (Number.isNaN(n)) this.noMinMax = true;
    else {
      if (n < this.min) this.min = n;
      if (n > this.max) this.max = n;
    }
  }

  /** Bytes held (an upper bound of the chunk's uncompressed size, less page headers). */
  get size(): number {
    return this.values.pos + (this.bools ? this.bools.n >> 3 : 0) + (this.defs.n >> 2);
  }

  /** The chunk's pages (level and value ranges); the last page ends at the current end. */
  pages(): PageCut[] {
    const end = { levels: this.defs.n, valueEnd: this.bools ? this.bools.n : this.values.pos };
    const last = this.cuts[this.cuts.length - 1];
    return last && last.levels === end.levels ? this.cuts : [...this.cuts, end];
  }

  stats(): ChunkStats | undefined {
    if (this.reps) return undefined;
    const st: ChunkStats = { nulls: this.nulls };
    if (this.numeric && !this.noMinMax && this.min <= this.max) {
      const enc = (n: number) => {
        const b = Buffer.alloc(8);
        if (this.col.physicalType === "DOUBLE") b.writeDoubleLE(n, 0);
        else {
          const hi = Math.floor(n / TWO_32);
          b.writeUInt32LE(n - hi * TWO_32, 0);
          b.writeInt32LE(hi, 4);
        }
        return new Uint8Array(b.buffer, b.byteOffset, 8);
      };
      // Zeros: min is written as -0.0 and max as +0.0 (parquet.thrift, ColumnOrder).
      st.min = enc(this.min === 0 ? -0 : this.min);
      st.max = enc(this.max === 0 ? 0 : this.max);
    }
    return st;
  }

  reset() {
    this.defs.n = 0;
    if (this.reps) this.reps.n = 0;
    if (this.bools) this.bools.n = 0;
    this.values.pos = 0;
    this.nulls = 0;
    this.min = Number.POSITIVE_INFINITY;
    this.max = Number.NEGATIVE_INFINITY;
    this.noMinMax = false;
    this.cuts = [];
    this.pageStart = 0;
  }
}
