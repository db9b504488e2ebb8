import { gzipSync } from "node:zlib";
import snappy from "snappyjs";
import { canonicalTime } from "../runs/time.ts";
import { EXPORT_FIELDS, type ExportField, type ExportRow, FIELD_KINDS } from "./fields.ts";
import { Sink } from "./sink.ts";
import { CompactWriter, CT } from "./thrift.ts";
import { zstdCompress } from "./zstd.ts";

// A streaming Parquet writer for exported runs. Values are encoded column by column as rows arrive (PLAIN
// values, RLE/bit-packed hybrid levels), so the raw rows are not kept: a file in progress holds one row group
// of encoded, uncompressed column data plus the compressed row groups already closed. When a row group fills,
// each column chunk is cut into data pages (v1 page headers, ~1 MiB each), compressed, and kept as parts of
// the file; the footer (Thrift compact protocol) is written by finish().
//
// Types (see parquetColumns): v1 keeps to types every engine reads (strings, JSON text, lists as JSON text,
// TIMESTAMP(MICROS) not adjusted to UTC); v2_beta adds UTC-adjusted timestamps, LIST<STRING> and JSON.

export type FormatVersion = "v1" | "v2_beta";
export type Compression = "none" | "gzip" | "snappy" | "zstandard";
export interface ParquetFileOptions {
  fields: readonly ExportField[];
  formatVersion: FormatVersion;
  compression: Compression;
  /** Rows per row group (default 10,000). */
  rowGroupRows?: number;
}

export type PhysicalType = "BOOLEAN" | "INT64" | "DOUBLE" | "BYTE_ARRAY";
export type LogicalType =
  | { type: "STRING" }
  | { type: "JSON" }
  | { type: "LIST" }
  | { type: "TIMESTAMP"; unit: "MICROS"; isAdjustedToUTC: boolean };
export type ConvertedType = "UTF8" | "JSON" | "LIST" | "TIMESTAMP_MICROS";
export type Repetition = "REQUIRED" | "OPTIONAL" | "REPEATED";

/** One node of the Parquet schema: a leaf (physicalType set) or a group (children set). */
export interface SchemaNode {
  name: string;
  repetition: Repetition;
  physicalType?: PhysicalType;
  logicalType?: LogicalType;
  convertedType?: ConvertedType;
  children?: SchemaNode[];
}

/** How one export field is stored: its schema node and its (single) leaf column. */
export interface ParquetColumn {
  field: ExportField;
  kind: (typeof FIELD_KINDS)[ExportField];
  schema: SchemaNode;
  /** Path of the leaf column in the schema (["tags", "list", "element"] for a v2_beta list). */
  path: string[];
  physicalType: PhysicalType;
  maxDefinitionLevel: number;
  maxRepetitionLevel: number;
}

export const DEFAULT_ROW_GROUP_ROWS = 10_000;
/** A column chunk is cut into pages of about this many bytes of values (cut at row boundaries). */
export const PAGE_BYTES = 1 << 20;
export const GZIP_LEVEL = 6;
const CREATED_BY = "agent-platform parquet writer version 1.0.0";

const STRING: LogicalType = { type: "STRING" };

/** The Parquet column of each field, in the order given. All columns are optional (nullable). */
export function parquetColumns(
  fields: readonly ExportField[],
  formatVersion: FormatVersion,
): ParquetColumn[] {
  const v2 = formatVersion === "v2_beta";
  return fields.map((field): ParquetColumn => {
    const kind = FIELD_KINDS[field];
    const leaf = (physicalType: PhysicalType, extra: Partial<SchemaNode> = {}): ParquetColumn => ({
      field,
      kind,
      schema: { name: field, repetition: "OPTIONAL", physicalType, ...extra },
      path: [field],
      physicalType,
      maxDefinitionLevel: 1,
      maxRepetitionLevel: 0,
    });
    switch (kind) {
      case "string":
        return leaf("BYTE_ARRAY", { logicalType: STRING, convertedType: "UTF8" });
      case "json":
        return v2
          ? leaf("BYTE_ARRAY", { logicalType: { type: "JSON" }, convertedType: "JSON" })
          : leaf("BYTE_ARRAY", { logicalType: STRING, convertedType: "UTF8" });
      case "list":
        if (!v2) return leaf("BYTE_ARRAY", { logicalType: STRING, convertedType: "UTF8" });
        // The standard three-level list: optional group (LIST) { repeated group list { optional element } }.
        return {
          field,
          kind,
          schema: {
            name: field,
            repetition: "OPTIONAL",
            logicalType: { type: "LIST" },
            convertedType: "LIST",
            children: [
              {
                name: "list",
                repetition: "REPEATED",
                children: [
                  {
                    name: "element",
                    repetition: "OPTIONAL",
                    physicalType: "BYTE_ARRAY",
                    logicalType: STRING,
                    convertedType: "UTF8",
                  },
                ],
              },
            ],
          },
          path: [field, "list", "element"],
          physicalType: "BYTE_ARRAY",
          maxDefinitionLevel: 3,
          maxRepetitionLevel: 1,
        };
      case "timestamp":
        // Microseconds, never nanos (Spark and Glue reject nanos). The legacy TIMESTAMP_MICROS annotation is
        // kept beside the logical type so readers that only know converted types (parquet-mr < 1.11) still
        // see a timestamp; Arrow writes naive timestamps the same way.
        return leaf("INT64", {
          logicalType: { type: "TIMESTAMP", unit: "MICROS", isAdjustedToUTC: v2 },
          convertedType: "TIMESTAMP_MICROS",
        });
      case "int":
        return leaf("INT64");
      case "float":
        return leaf("DOUBLE");
      case "bool":
        return leaf("BOOLEAN");
      default:
        throw new Error(`no Parquet type for field ${field}`);
    }
  });
}

// — Thrift enum values (parquet.thrift) —
const PHYSICAL: Record<PhysicalType, number> = { BOOLEAN: 0, INT64: 2, DOUBLE: 5, BYTE_ARRAY: 6 };
const REPETITION: Record<Repetition, number> = { REQUIRED: 0, OPTIONAL: 1, REPEATED: 2 };
const CONVERTED: Record<ConvertedType, number> = { UTF8: 0, LIST: 3, TIMESTAMP_MICROS: 10, JSON: 19 };
const CODEC: Record<Compression, number> = { none: 0, snappy: 1, gzip: 2, zstandard: 6 };
const ENCODING_PLAIN = 0;
const ENCODING_RLE = 3;
const PAGE_DATA = 0;

const MAGIC = new Uint8Array([0x50, 0x41, 0x52, 0x31]); // "PAR1"

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

// — values —
/** Buffer's UTF-8 writer without Buffer#write's argument handling (a hot path: most values are strings). */
const utf8Write: (this: Buffer, s: string, offset: number) => number =
  (Buffer.prototype as any).utf8Write ??
  function (this: Buffer, s: string, offset: number) {
    return this.write(s, offset, "utf8");
  };
const TWO_32 = 2 ** 32;
const TWO_63 = 2 ** 63;

/** The digit at `i` of `s`, or 10,000 (past every range checked below, in any position) if it is not one. */
function digit(s: string, i: number): number {
  const c = s.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : 10_000;
}

/** The parts of the last time canonicalMicros read: whole seconds since the epoch, and the microseconds. */
let lastSeconds = 0;
let lastMicros = 0;
/** The last time canonicalMicros read, exactly (for times whose microsecond count is past 2^53). */
const exactMicros = () => BigInt(lastSeconds) * 1_000_000n + BigInt(lastMicros);

/** Microseconds since the epoch of a canonical UTC time (`YYYY-MM-DDTHH:MM:SS.ffffffZ`); NaN if not one. */
function canonicalMicros(s: string): number {
  if (
    s.length !== 27 ||
    s.charCodeAt(4) !== 45 ||
    s.charCodeAt(7) !== 45 ||
    s.charCodeAt(10) !== 84 ||
    s.charCodeAt(13) !== 58 ||
    s.charCodeAt(16) !== 58 ||
    s.charCodeAt(19) !== 46 ||
    s.charCodeAt(26) !== 90
  )
    return Number.NaN;
  let y = digit(s, 0) * 1000 + digit(s, 1) * 100 + digit(s, 2) * 10 + digit(s, 3);
  const mo = digit(s, 5) * 10 + digit(s, 6);
  const day = digit(s, 8) * 10 + digit(s, 9);
  const h = digit(s, 11) * 10 + digit(s, 12);
  const mi = digit(s, 14) * 10 + digit(s, 15);
  const sec = digit(s, 17) * 10 + digit(s, 18);
  const ms = digit(s, 20) * 100 + digit(s, 21) * 10 + digit(s, 22);
  const us = digit(s, 23) * 100 + digit(s, 24) * 10 + digit(s, 25);
  if (
    y > 9999 ||
    mo < 1 ||
    mo > 12 ||
    day < 1 ||
    day > 31 ||
    h > 23 ||
    mi > 59 ||
    sec > 59 ||
    ms > 999 ||
    us > 999
  )
    return Number.NaN;
  // Days from 1970-01-01 to the civil date (proleptic Gregorian).
  if (mo <= 2) y -= 1;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (mo > 2 ? mo - 3 : mo + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  const days = era * 146097 + doe - 719468;
  lastSeconds = ((days * 24 + h) * 60 + mi) * 60 + sec;
  lastMicros = ms * 1000 + us;
  // Past 2255-06-05 the microsecond count leaves the exact range of a double: see exactMicros.
  return lastSeconds * 1_000_000 + lastMicros;
}

function fail(field: ExportField, what: string, v: unknown): never {
  const shown = typeof v === "string" ? JSON.stringify(v.slice(0, 60)) : String(v);
  throw new TypeError(`Parquet column ${field}: ${what}, got ${shown}`);
}

/** A timestamp that is not a canonical string (the fast path is canonicalMicros). */
function timestampMicros(field: ExportField, v: unknown): number {
  // Anything canonicalTime accepts: other ISO forms and offsets, epoch milliseconds (number or digits).
  const c = typeof v === "string" || typeof v === "number" ? canonicalTime(v) : undefined;
  const us = c === undefined ? Number.NaN : canonicalMicros(c);
  if (Number.isNaN(us)) fail(field, "expected a UTC timestamp", v);
  return us;
}

function int64(field: ExportField, v: unknown): number {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : Number.NaN;
  if (!Number.isFinite(n) || Math.abs(n) >= TWO_63) fail(field, "expected an integer", v);
  return Math.trunc(n);
}

function float64(field: ExportField, v: unknown): number {
  if (typeof v === "number") return v;
  const n = typeof v === "string" && v.trim() !== "" ? Number(v) : Number.NaN;
  if (Number.isNaN(n)) fail(field, "expected a number", v);
  return n;
}

function bool(field: ExportField, v: unknown): boolean {
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return v !== 0;
  if (v === "true") return true;
  if (v === "false") return false;
  return fail(field, "expected a boolean", v);
}

function text(v: unknown): string {
  return typeof v === "string" ? v : typeof v === "object" ? JSON.stringify(v) : String(v);
}

function listItems(field: ExportField, v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (typeof v === "string") {
    try {
      const parsed = JSON.parse(v);
      if (Array.isArray(parsed)) return parsed;
    } catch {}
  }
  return fail(field, "expected a list of strings", v);
}

// — one column of the row group being filled —
interface PageCut {
  levels: number;
  valueEnd: number;
}

interface ChunkStats {
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

class ColumnBuilder {
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
        const us = typeof v === "string" ? canonicalMicros(v) : Number.NaN;
        this.pendingNum = Number.isNaN(us) ? timestampMicros(field, v) : us;
        this.pendingBig = Number.isSafeInteger(this.pendingNum) ? null : exactMicros();
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

// — encodings —

/** Levels [from, to) in the RLE/bit-packed hybrid, with data page v1's 4-byte length prefix. */
function writeLevels(out: Sink, src: Uint8Array, from: number, to: number, width: number) {
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

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function compress(c: Compression, page: Uint8Array): Uint8Array {
  switch (c) {
    case "none":
      return page;
    case "gzip":
      return gzipSync(page, { level: GZIP_LEVEL });
    case "snappy":
      return snappy.compress(page);
    case "zstandard":
      return zstdCompress(page);
  }
}

// — the file —
interface ChunkMeta {
  col: ParquetColumn;
  dataPageOffset: number;
  numValues: number;
  uncompressed: number;
  compressed: number;
  stats?: ChunkStats;
}
interface RowGroupMeta {
  rows: number;
  offset: number;
  uncompressed: number;
  compressed: number;
  chunks: ChunkMeta[];
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
        const header = new CompactWriter()
          .i32(1, PAGE_DATA)
          .i32(2, rawSize)
          .i32(3, bodySize)
          .struct(5, (h) =>
            h
              .i32(1, cut.levels - levelFrom)
              .i32(2, ENCODING_PLAIN)
              .i32(3, ENCODING_RLE)
              .i32(4, ENCODING_RLE),
          )
          .stop()
          .bytes();
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
    const w = new CompactWriter();
    w.i32(1, this.version === "v2_beta" ? 2 : 1);
    const nodes: SchemaNode[] = [];
    const walk = (n: SchemaNode) => {
      nodes.push(n);
      for (const c of n.children ?? []) walk(c);
    };
    for (const c of this.columns) walk(c.schema);
    w.listHeader(2, CT.STRUCT, nodes.length + 1);
    w.elemStruct((s) => s.string(4, "schema").i32(5, this.columns.length));
    for (const n of nodes) w.elemStruct((s) => schemaElement(s, n));
    w.i64(3, this.total);
    w.listHeader(4, CT.STRUCT, this.groups.length);
    for (const [ordinal, g] of this.groups.entries())
      w.elemStruct((rg) => {
        rg.listHeader(1, CT.STRUCT, g.chunks.length);
        for (const c of g.chunks) rg.elemStruct((cc) => columnChunk(cc, c, CODEC[this.compression]));
        rg.i64(2, g.uncompressed).i64(3, g.rows).i64(5, g.offset).i64(6, g.compressed).i16(7, ordinal);
      });
    w.string(6, CREATED_BY);
    // Column orders: min/max statistics follow each type's own order.
    w.listHeader(7, CT.STRUCT, this.columns.length);
    for (let i = 0; i < this.columns.length; i++) w.elemStruct((o) => o.struct(1));
    w.stop();
    return w.bytes();
  }
}

function schemaElement(w: CompactWriter, n: SchemaNode) {
  if (n.physicalType) w.i32(1, PHYSICAL[n.physicalType]);
  w.i32(3, REPETITION[n.repetition]);
  w.string(4, n.name);
  if (n.children) w.i32(5, n.children.length);
  if (n.convertedType) w.i32(6, CONVERTED[n.convertedType]);
  const lt = n.logicalType;
  if (lt)
    w.struct(10, (u) => {
      switch (lt.type) {
        case "STRING":
          u.struct(1);
          break;
        case "LIST":
          u.struct(3);
          break;
        case "TIMESTAMP":
          u.struct(8, (t) => t.bool(1, lt.isAdjustedToUTC).struct(2, (unit) => unit.struct(2)));
          break;
        case "JSON":
          u.struct(12);
          break;
      }
    });
}

function columnChunk(w: CompactWriter, c: ChunkMeta, codec: number) {
  w.i64(2, c.dataPageOffset);
  w.struct(3, (m) => {
    m.i32(1, PHYSICAL[c.col.physicalType]);
    m.listHeader(2, CT.I32, 2).elemI32(ENCODING_PLAIN).elemI32(ENCODING_RLE);
    m.listHeader(3, CT.BINARY, c.col.path.length);
    for (const p of c.col.path) m.elemString(p);
    m.i32(4, codec).i64(5, c.numValues).i64(6, c.uncompressed).i64(7, c.compressed).i64(9, c.dataPageOffset);
    const st = c.stats;
    if (st)
      m.struct(12, (s) => {
        s.i64(3, st.nulls);
        if (st.max) s.binary(5, st.max);
        if (st.min) s.binary(6, st.min);
      });
  });
}
