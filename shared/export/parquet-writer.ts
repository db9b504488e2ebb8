import { gzipSync } from "node:zlib";
import { compress as zstdCompress, init as zstdInit } from "@bokuweb/zstd-wasm";
import snappy from "snappyjs";
import { type ExportField, type ExportRow, FIELD_KINDS } from "./fields.ts";

// A small streaming Parquet writer for exported runs: PLAIN-encoded data pages (v1), RLE/bit-packed levels,
// one page per column per row group, the footer in Thrift's compact protocol. Row groups are encoded and
// compressed as they fill, so a file holds at most one row group of raw rows in memory.
export type FormatVersion = "v1" | "v2_beta";
export type Compression = "none" | "gzip" | "snappy" | "zstandard";
export interface ParquetFileOptions {
  fields: readonly ExportField[];
  formatVersion: FormatVersion;
  compression: Compression;
  /** Rows per row group (default 10,000). */
  rowGroupRows?: number;
}

enum T {
  BOOLEAN = 0,
  INT64 = 2,
  DOUBLE = 5,
  BYTE_ARRAY = 6,
}
const CODEC: Record<Compression, number> = { none: 0, snappy: 1, gzip: 2, zstandard: 6 };
const MAGIC = Buffer.from("PAR1");

// — Thrift compact protocol (the subset the footer and page headers need) —
class Thrift {
  private chunks: number[] = [];
  private last: number[] = [0];
  private byte(b: number) {
    this.chunks.push(b & 0xff);
  }
  private varint(n: number) {
    let v = n;
    while (v >= 0x80) {
      this.byte((v & 0x7f) | 0x80);
      v = Math.floor(v / 128);
    }
    this.byte(v);
  }
  private zigzag(n: number) {
    this.varint(n >= 0 ? n * 2 : -n * 2 - 1);
  }
  private header(id: number, type: number) {
    const delta = id - this.last[this.last.length - 1]!;
    if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
    else {
      this.byte(type);
      this.zigzag(id);
    }
    this.last[this.last.length - 1] = id;
  }
  i32(id: number, v: number) {
    this.header(id, 5);
    this.zigzag(v);
    return this;
  }
  i64(id: number, v: number) {
    this.header(id, 6);
    this.zigzag(v);
    return this;
  }
  i8(id: number, v: number) {
    this.header(id, 3);
    this.byte(v);
    return this;
  }
  bool(id: number, v: boolean) {
    this.header(id, v ? 1 : 2);
    return this;
  }
  string(id: number, s: string) {
    this.header(id, 8);
    const b = Buffer.from(s, "utf8");
    this.varint(b.length);
    for (const x of b) this.byte(x);
    return this;
  }
  struct(id: number, body: (t: Thrift) => void) {
    this.header(id, 12);
    this.last.push(0);
    body(this);
    this.byte(0);
    this.last.pop();
    return this;
  }
  list(id: number, elemType: number, items: unknown[], each: (t: Thrift, item: any) => void) {
    this.header(id, 9);
    if (items.length < 15) this.byte((items.length << 4) | elemType);
    else {
      this.byte(0xf0 | elemType);
      this.varint(items.length);
    }
    for (const item of items) {
      if (elemType === 12) {
        this.last.push(0);
        each(this, item);
        this.byte(0);
        this.last.pop();
      } else each(this, item);
    }
    return this;
  }
  /** List element writers (no field header). */
  elemI32(v: number) {
    this.zigzag(v);
  }
  elemString(s: string) {
    const b = Buffer.from(s, "utf8");
    this.varint(b.length);
    for (const x of b) this.byte(x);
  }
  stop() {
    this.byte(0);
    return this;
  }
  bytes(): Buffer {
    return Buffer.from(this.chunks);
  }
}

// — columns —
interface Leaf {
  field: ExportField;
  path: string[];
  type: T;
  maxDef: number;
  maxRep: number;
  /** Schema elements of this field, outermost first. */
  schema: ((t: Thrift) => void)[];
}

function leafOf(field: ExportField, v2: boolean): Leaf {
  const kind = FIELD_KINDS[field];
  const optional = (t: Thrift) => t.i32(3, 1);
  const named = (t: Thrift, name: string) => t.string(4, name);
  const str = (t: Thrift) => t.i32(6, 0).struct(10, (l) => l.struct(1, () => {}));
  switch (kind) {
    case "list":
      if (v2)
        return {
          field,
          path: [field, "list", "element"],
          type: T.BYTE_ARRAY,
          maxDef: 2,
          maxRep: 1,
          schema: [
            (t) => {
              optional(t);
              named(t, field);
              t.i32(5, 1)
                .i32(6, 3)
                .struct(10, (l) => l.struct(3, () => {}));
            },
            (t) => {
              t.i32(3, 2);
              named(t, "list");
              t.i32(5, 1);
            },
            (t) => {
              t.i32(1, T.BYTE_ARRAY).i32(3, 0);
              named(t, "element");
              str(t);
            },
          ],
        };
      return simple(field, T.BYTE_ARRAY, str);
    case "json":
      return simple(
        field,
        T.BYTE_ARRAY,
        v2 ? (t) => t.i32(6, 19).struct(10, (l) => l.struct(12, () => {})) : str,
      );
    case "string":
      return simple(field, T.BYTE_ARRAY, str);
    case "timestamp":
      // INT64 microseconds; v2_beta marks them UTC-adjusted (TIMESTAMPTZ), v1 as plain timestamps. Never nanos.
      return simple(field, T.INT64, (t) => {
        if (v2) t.i32(6, 10); // TIMESTAMP_MICROS, which implies UTC-adjusted
        t.struct(10, (l) => l.struct(8, (ts) => ts.bool(1, v2).struct(2, (u) => u.struct(2, () => {}))));
      });
    case "int":
      return simple(field, T.INT64, (t) =>
        t.i32(6, 18).struct(10, (l) => l.struct(10, (i) => i.i8(1, 64).bool(2, true))),
      );
    case "float":
      return simple(field, T.DOUBLE, () => {});
    case "bool":
      return simple(field, T.BOOLEAN, () => {});
  }
}

function simple(field: ExportField, type: T, annotate: (t: Thrift) => void): Leaf {
  return {
    field,
    path: [field],
    type,
    maxDef: 1,
    maxRep: 0,
    schema: [
      (t) => {
        t.i32(1, type).i32(3, 1).string(4, field);
        annotate(t);
      },
    ],
  };
}

// — encodings —
const toMicros = (v: unknown): number | null => {
  if (v == null) return null;
  if (typeof v === "number") return Math.round(v * 1000);
  const s = String(v);
  const ms = Date.parse(s);
  if (!Number.isFinite(ms)) return null;
  const frac = /\.(\d{4,6})/.exec(s)?.[1];
  const extra = frac ? Number(frac.padEnd(6, "0").slice(3, 6)) : 0;
  return ms * 1000 + extra;
};

/** RLE/bit-packed hybrid levels with the 4-byte length prefix of data page v1. */
function levels(values: Uint8Array, count: number, width: number): Buffer {
  let body: Buffer;
  const first = values[0] ?? 0;
  let same = true;
  for (let i = 1; i < count; i++)
    if (values[i] !== first) {
      same = false;
      break;
    }
  if (same) {
    const header = varintBytes(count * 2);
    body = Buffer.concat([header, Buffer.from([first])]);
  } else {
    const groups = Math.ceil(count / 8);
    const packed = Buffer.alloc(groups * width);
    let bit = 0;
    for (let i = 0; i < groups * 8; i++) {
      const v = i < count ? values[i]! : 0;
      for (let b = 0; b < width; b++, bit++) if ((v >> b) & 1) packed[bit >> 3]! |= 1 << (bit & 7);
    }
    body = Buffer.concat([varintBytes(groups * 2 + 1), packed]);
  }
  const out = Buffer.alloc(4 + body.length);
  out.writeUInt32LE(body.length, 0);
  body.copy(out, 4);
  return out;
}

function varintBytes(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Buffer.from(out);
}

interface ColumnData {
  defs: Uint8Array;
  reps?: Uint8Array;
  levelCount: number;
  values: Buffer;
  nonNull: number;
}

function plainStrings(values: string[]): Buffer {
  let size = 0;
  for (const s of values) size += 4 + Buffer.byteLength(s, "utf8");
  const buf = Buffer.allocUnsafe(size);
  let off = 0;
  for (const s of values) {
    const n = buf.write(s, off + 4, "utf8");
    buf.writeUInt32LE(n, off);
    off += 4 + n;
  }
  return buf;
}

function encodeColumn(leaf: Leaf, rows: ExportRow[], v2: boolean): ColumnData {
  const n = rows.length;
  const kind = FIELD_KINDS[leaf.field];
  if (leaf.maxRep > 0) {
    const defs: number[] = [];
    const reps: number[] = [];
    const vals: string[] = [];
    for (const row of rows) {
      const list = row[leaf.field];
      if (list == null) {
        defs.push(0);
        reps.push(0);
      } else if (!Array.isArray(list) || list.length === 0) {
        defs.push(1);
        reps.push(0);
      } else
        list.forEach((x, j) => {
          defs.push(2);
          reps.push(j === 0 ? 0 : 1);
          vals.push(String(x));
        });
    }
    return {
      defs: Uint8Array.from(defs),
      reps: Uint8Array.from(reps),
      levelCount: defs.length,
      values: plainStrings(vals),
      nonNull: vals.length,
    };
  }
  const defs = new Uint8Array(n);
  if (leaf.type === T.BYTE_ARRAY) {
    const vals: string[] = [];
    for (let i = 0; i < n; i++) {
      let v = rows[i]![leaf.field];
      if (v == null) continue;
      if (kind === "list") v = JSON.stringify(v);
      defs[i] = 1;
      vals.push(typeof v === "string" ? v : String(v));
    }
    return { defs, levelCount: n, values: plainStrings(vals), nonNull: vals.length };
  }
  if (leaf.type === T.BOOLEAN) {
    const bits: boolean[] = [];
    for (let i = 0; i < n; i++) {
      const v = rows[i]![leaf.field];
      if (v == null) continue;
      defs[i] = 1;
      bits.push(Boolean(v));
    }
    const buf = Buffer.alloc(Math.ceil(bits.length / 8));
    bits.forEach((b, i) => {
      if (b) buf[i >> 3]! |= 1 << (i & 7);
    });
    return { defs, levelCount: n, values: buf, nonNull: bits.length };
  }
  const buf = Buffer.allocUnsafe(n * 8);
  let count = 0;
  for (let i = 0; i < n; i++) {
    const raw = rows[i]![leaf.field];
    const v = kind === "timestamp" ? toMicros(raw) : raw == null || raw === "" ? null : Number(raw);
    if (v == null || Number.isNaN(v)) continue;
    defs[i] = 1;
    if (leaf.type === T.DOUBLE) buf.writeDoubleLE(v, count * 8);
    else buf.writeBigInt64LE(BigInt(Math.trunc(v)), count * 8);
    count++;
  }
  void v2;
  return { defs, levelCount: n, values: buf.subarray(0, count * 8), nonNull: count };
}

let zstdReady: Promise<void> | undefined;
let zstdLoaded = false;
/** Loads the zstd encoder (WebAssembly) once; await before writing zstandard files. */
export async function prepareCompression(c: Compression): Promise<void> {
  if (c !== "zstandard" || zstdLoaded) return;
  zstdReady ??= zstdInit().then(() => {
    zstdLoaded = true;
  });
  await zstdReady;
}

function compressPage(c: Compression, page: Buffer): Buffer {
  switch (c) {
    case "none":
      return page;
    case "gzip":
      return gzipSync(page, { level: 6 });
    case "snappy":
      return Buffer.from(snappy.compress(page));
    case "zstandard":
      if (!zstdLoaded) throw new Error("call prepareCompression('zstandard') before writing zstd files");
      return Buffer.from(zstdCompress(page, 3));
  }
}

interface ChunkMeta {
  leaf: Leaf;
  offset: number;
  numValues: number;
  uncompressed: number;
  compressed: number;
}
interface RowGroupMeta {
  rows: number;
  chunks: ChunkMeta[];
  bytes: number;
}

export class ParquetFileWriter {
  private readonly leaves: Leaf[];
  private readonly v2: boolean;
  private readonly groupRows: number;
  private buffered: ExportRow[] = [];
  private bufferedBytes = 0;
  private parts: Buffer[] = [MAGIC];
  private offset = MAGIC.length;
  private groups: RowGroupMeta[] = [];
  private total = 0;

  constructor(private readonly opts: ParquetFileOptions) {
    this.v2 = opts.formatVersion === "v2_beta";
    this.leaves = opts.fields.map((f) => leafOf(f, this.v2));
    this.groupRows = opts.rowGroupRows ?? 10_000;
    if (opts.compression === "zstandard" && !zstdLoaded)
      throw new Error("call prepareCompression('zstandard') before writing zstd files");
  }

  get rows(): number {
    return this.total;
  }

  /** Bytes written so far plus an estimate of the buffered rows (their JSON text sizes). */
  get bytes(): number {
    return this.offset + this.bufferedBytes;
  }

  append(row: ExportRow): void {
    this.buffered.push(row);
    this.total++;
    for (const f of this.opts.fields) {
      const v = row[f];
      this.bufferedBytes += typeof v === "string" ? v.length : 8;
    }
    if (this.buffered.length >= this.groupRows) this.flushGroup();
  }

  private flushGroup(): void {
    const rows = this.buffered;
    if (!rows.length) return;
    this.buffered = [];
    this.bufferedBytes = 0;
    const chunks: ChunkMeta[] = [];
    let groupBytes = 0;
    for (const leaf of this.leaves) {
      const col = encodeColumn(leaf, rows, this.v2);
      const pieces: Buffer[] = [];
      if (leaf.maxRep > 0) pieces.push(levels(col.reps!, col.levelCount, 1));
      pieces.push(levels(col.defs, col.levelCount, leaf.maxDef > 1 ? 2 : 1));
      pieces.push(col.values);
      const raw = Buffer.concat(pieces);
      const page = compressPage(this.opts.compression, raw);
      const header = new Thrift()
        .i32(1, 0)
        .i32(2, raw.length)
        .i32(3, page.length)
        .struct(5, (d) => d.i32(1, col.levelCount).i32(2, 0).i32(3, 3).i32(4, 3))
        .stop()
        .bytes();
      chunks.push({
        leaf,
        offset: this.offset,
        numValues: col.levelCount,
        uncompressed: header.length + raw.length,
        compressed: header.length + page.length,
      });
      this.parts.push(header, page);
      this.offset += header.length + page.length;
      groupBytes += header.length + raw.length;
    }
    this.groups.push({ rows: rows.length, chunks, bytes: groupBytes });
  }

  /** The whole file as one buffer. */
  async finish(): Promise<Uint8Array> {
    return Buffer.concat(this.finishParts().parts);
  }

  /** The file as its parts (no copy into one buffer: an upload can stream them), with the total length. */
  finishParts(): { parts: Buffer[]; length: number } {
    this.flushGroup();
    const t = new Thrift();
    t.i32(1, 1);
    const schema: ((t: Thrift) => void)[] = [
      (s) => {
        s.string(4, "schema").i32(5, this.leaves.length);
      },
      ...this.leaves.flatMap((l) => l.schema),
    ];
    t.list(2, 12, schema, (s, el) => el(s));
    t.i64(3, this.total);
    t.list(4, 12, this.groups, (s, g: RowGroupMeta) => {
      s.list(1, 12, g.chunks, (c, ch: ChunkMeta) => {
        c.i64(2, ch.offset);
        c.struct(3, (m) => {
          m.i32(1, ch.leaf.type);
          m.list(2, 5, [0, 3], (e, x) => e.elemI32(x));
          m.list(3, 8, ch.leaf.path, (e, x) => e.elemString(x));
          m.i32(4, CODEC[this.opts.compression]);
          m.i64(5, ch.numValues);
          m.i64(6, ch.uncompressed);
          m.i64(7, ch.compressed);
          m.i64(9, ch.offset);
        });
      });
      s.i64(2, g.bytes);
      s.i64(3, g.rows);
      s.i64(5, g.chunks[0]?.offset ?? 4);
      s.i64(
        6,
        g.chunks.reduce((n, c) => n + c.compressed, 0),
      );
    });
    t.string(6, "agent-platform parquet writer");
    t.stop();
    const footer = t.bytes();
    const len = Buffer.alloc(4);
    len.writeUInt32LE(footer.length, 0);
    const parts = [...this.parts, footer, len, MAGIC];
    this.parts = [];
    return { parts, length: this.offset + footer.length + 8 };
  }
}
