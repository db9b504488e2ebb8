import { EXPORT_FIELDS, type ExportField, type ExportRow } from "../../records/export-fields.ts";
import { Sink } from "../sink.ts";
import { CODEC, type Compression, compress } from "./codecs.ts";
import { ColumnBuilder } from "./column-builder.ts";
import { type FormatVersion, type ParquetColumn, parquetColumns } from "./columns.ts";
import { writeLevels } from "./levels.ts";
import { type ChunkMeta, dataPageHeader, fileMetadata, type RowGroupMeta } from "./metadata.ts";

// A streaming Parquet writer for exported runs. Values are encoded column by column as rows arrive (see
// column-builder.ts), so the raw rows are not kept: a file in progress holds one row group of encoded,
// uncompressed column data plus the compressed row groups already closed. When a row group fills, each
// column chunk is cut into data pages (v1 page headers, ~1 MiB each), compressed, and kept as parts of the
// file; the footer (Thrift compact protocol, metadata.ts) is written by finish().

export interface ParquetFileOptions {
  fields: readonly ExportField[];
  formatVersion: FormatVersion;
  compression: Compression;
  /** Rows per row group (default 10,000). */
  rowGroupRows?: number;
}

export const DEFAULT_ROW_GROUP_ROWS = 10_000;

const MAGIC = new Uint8Array([0x50, 0x41, 0x52, 0x31]); // "PAR1"

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

export class ParquetFileWriter {
  private readonly columns: ParquetColumn[];
  private readonly builders: ColumnBuilder[];
  private readonly groupRows: number;
  private readonly compression: Compression;
  private readonly version: FormatVersion;
  private readonly levelSink = new Sink(4096);
  private parts: Uint8Array[] = [MAGIC];
  private offset = MAGIC.length;
  private groups: RowGroupMeta[] = [];
  private total = 0;
  private inGroup = 0;
  private finished = false;

  constructor(opts: ParquetFileOptions) {
    const fields = opts.fields;
    if (!fields.length) throw new Error("a Parquet file needs at least one field");
    const seen = new Set<string>();
    for (const f of fields) {
      if (!(EXPORT_FIELDS as readonly string[]).includes(f)) throw new Error(`unknown export field ${f}`);
      if (seen.has(f)) throw new Error(`export field ${f} given twice`);
      seen.add(f);
    }
    if (!(opts.compression in CODEC)) throw new Error(`unknown compression ${opts.compression}`);
    if (opts.formatVersion !== "v1" && opts.formatVersion !== "v2_beta")
      throw new Error(`unknown format version ${opts.formatVersion}`);
    const groupRows = opts.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS;
    if (!Number.isInteger(groupRows) || groupRows < 1)
      throw new Error("rowGroupRows must be a positive integer");
    this.groupRows = groupRows;
    this.compression = opts.compression;
    this.version = opts.formatVersion;
    this.columns = parquetColumns(fields, opts.formatVersion);
    this.builders = this.columns.map((c) => new ColumnBuilder(c));
  }

  /** Rows appended so far. */
  get rows(): number {
    return this.total;
  }

  /** Bytes of the closed row groups plus the encoded, not yet compressed, size of the buffered rows. */
  get bytes(): number {
    let n = this.offset;
    for (const b of this.builders) n += b.size;
    return n;
  }

  append(row: ExportRow): void {
    if (this.finished) throw new Error("append after finish");
    const builders = this.builders;
    // Convert every value first, so a bad one throws before any column has taken the row.
    for (let i = 0; i < builders.length; i++) {
      const b = builders[i]!;
      b.prepare(row[b.col.field]);
    }
    for (let i = 0; i < builders.length; i++) builders[i]!.commit();
    this.total++;
    if (++this.inGroup >= this.groupRows) this.flushGroup();
  }

  /** Encodes the buffered rows as a row group: pages compressed, column data kept as parts of the file. */
  private flushGroup(): void {
    if (this.inGroup === 0) return;
    const group: RowGroupMeta = {
      rows: this.inGroup,
      offset: this.offset,
      uncompressed: 0,
      compressed: 0,
      chunks: [],
    };
    for (const b of this.builders) {
      const chunk: ChunkMeta = {
        col: b.col,
        dataPageOffset: this.offset,
        numValues: b.defs.n,
        uncompressed: 0,
        compressed: 0,
        stats: b.stats(),
      };
      let levelFrom = 0;
      let valueFrom = 0;
      for (const cut of b.pages()) {
        const [levels, values] = this.page(b, levelFrom, cut.levels, valueFrom, cut.valueEnd);
        const rawSize = levels.length + values.length;
        // Uncompressed pages go out as their two pieces; the values stay a view of the builder's buffer,
        // which is handed over below (no copy).
        const body =
          this.compression === "none"
            ? [levels, values]
            : [compress(this.compression, concat(levels, values))];
        const bodySize = body.reduce((n, p) => n + p.length, 0);
        const header = dataPageHeader(cut.levels - levelFrom, rawSize, bodySize);
        this.parts.push(header, ...body);
        this.offset += header.length + bodySize;
        chunk.uncompressed += header.length + rawSize;
        chunk.compressed += header.length + bodySize;
        levelFrom = cut.levels;
        valueFrom = cut.valueEnd;
      }
      if (this.compression === "none") b.values.detach();
      group.uncompressed += chunk.uncompressed;
      group.compressed += chunk.compressed;
      group.chunks.push(chunk);
      b.reset();
    }
    this.groups.push(group);
    this.inGroup = 0;
  }

  /** One data page v1, uncompressed, in two pieces: the levels (repetition, definition) and the values. */
  private page(
    b: ColumnBuilder,
    levelFrom: number,
    levelTo: number,
    valueFrom: number,
    valueTo: number,
  ): [Uint8Array, Uint8Array] {
    const sink = this.levelSink;
    sink.pos = 0;
    if (b.reps) writeLevels(sink, b.reps.a, levelFrom, levelTo, 1);
    writeLevels(sink, b.defs.a, levelFrom, levelTo, b.width);
    const levels = new Uint8Array(sink.buf.subarray(0, sink.pos)); // a copy: the sink is reused
    if (!b.bools) return [levels, b.values.buf.subarray(valueFrom, valueTo)];
    const n = valueTo - valueFrom;
    const bits = new Uint8Array(Math.ceil(n / 8));
    const src = b.bools.a;
    for (let i = 0; i < n; i++) if (src[valueFrom + i]) bits[i >> 3]! |= 1 << (i & 7);
    return [levels, bits];
  }

  /** Encoded bytes of closed row groups not yet taken by `takeParts`. */
  get pendingBytes(): number {
    let n = 0;
    for (const p of this.parts) n += p.length;
    return n;
  }

  /**
   * The file's next bytes (the closed row groups encoded since the last call), handed out and forgotten, so
   * an upload can stream a file of any size while only its unsent tail stays in memory.
   */
  takeParts(): Buffer[] {
    const parts = this.parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.length));
    this.parts = [];
    return parts;
  }

  /** The whole file (PAR1, row groups, footer, PAR1). */
  async finish(): Promise<Uint8Array> {
    const { parts, length } = this.finishParts();
    const out = Buffer.allocUnsafe(length);
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }

  /** The file as its parts, in order, with their total length: an upload can stream them without a copy. */
  finishParts(): { parts: Buffer[]; length: number } {
    if (this.finished) throw new Error("finish called twice");
    this.flushGroup();
    this.finished = true;
    const footer = this.footer();
    const tail = new Uint8Array(8);
    new DataView(tail.buffer).setUint32(0, footer.length, true);
    tail.set(MAGIC, 4);
    // Buffer views (no copy), so the parts can go straight to a stream or an upload body.
    const parts = [...this.parts, footer, tail].map((p) => Buffer.from(p.buffer, p.byteOffset, p.length));
    this.parts = [];
    return { parts, length: this.offset + footer.length + 8 };
  }

  private footer(): Uint8Array {
    return fileMetadata({
      version: this.version,
      columns: this.columns,
      rows: this.total,
      groups: this.groups,
      codec: CODEC[this.compression],
    });
  }
}
