import { CompactWriter, CT } from "../thrift.ts";
import type { ChunkStats } from "./column-builder.ts";
import type {
  ConvertedType,
  FormatVersion,
  ParquetColumn,
  PhysicalType,
  Repetition,
  SchemaNode,
} from "./columns.ts";

// The file's Thrift structures (parquet.thrift, compact protocol): each data page's header, and the footer
// (FileMetaData: schema, row groups with their column chunks and statistics, column orders).

const CREATED_BY = "agent-platform parquet writer version 1.0.0";

// — Thrift enum values (parquet.thrift) —
const PHYSICAL: Record<PhysicalType, number> = { BOOLEAN: 0, INT64: 2, DOUBLE: 5, BYTE_ARRAY: 6 };
const REPETITION: Record<Repetition, number> = { REQUIRED: 0, OPTIONAL: 1, REPEATED: 2 };
const CONVERTED: Record<ConvertedType, number> = { UTF8: 0, LIST: 3, TIMESTAMP_MICROS: 10, JSON: 19 };
const ENCODING_PLAIN = 0;
const ENCODING_RLE = 3;
const PAGE_DATA = 0;

export interface ChunkMeta {
  col: ParquetColumn;
  dataPageOffset: number;
  numValues: number;
  uncompressed: number;
  compressed: number;
  stats?: ChunkStats;
}
export interface RowGroupMeta {
  rows: number;
  offset: number;
  uncompressed: number;
  compressed: number;
  chunks: ChunkMeta[];
}

/** The PageHeader of a data page v1: PLAIN values, RLE levels. */
export function dataPageHeader(numValues: number, uncompressed: number, compressed: number): Uint8Array {
  return new CompactWriter()
    .i32(1, PAGE_DATA)
    .i32(2, uncompressed)
    .i32(3, compressed)
    .struct(5, (h) => h.i32(1, numValues).i32(2, ENCODING_PLAIN).i32(3, ENCODING_RLE).i32(4, ENCODING_RLE))
    .stop()
    .bytes();
}

/** The footer's FileMetaData. */
export function fileMetadata(file: {
  version: FormatVersion;
  columns: readonly ParquetColumn[];
  rows: number;
  groups: readonly RowGroupMeta[];
  codec: number;
}): Uint8Array {
  const w = new CompactWriter();
  w.i32(1, file.version === "v2_beta" ? 2 : 1);
  const nodes: SchemaNode[] = [];
  const walk = (n: SchemaNode) => {
    nodes.push(n);
    for (const c of n.children ?? []) walk(c);
  };
  for (const c of file.columns) walk(c.schema);
  w.listHeader(2, CT.STRUCT, nodes.length + 1);
  w.elemStruct((s) => s.string(4, "schema").i32(5, file.columns.length));
  for (const n of nodes) w.elemStruct((s) => schemaElement(s, n));
  w.i64(3, file.rows);
  w.listHeader(4, CT.STRUCT, file.groups.length);
  for (const [ordinal, g] of file.groups.entries())
    w.elemStruct((rg) => {
      rg.listHeader(1, CT.STRUCT, g.chunks.length);
      for (const c of g.chunks) rg.elemStruct((cc) => columnChunk(cc, c, file.codec));
      rg.i64(2, g.uncompressed).i64(3, g.rows).i64(5, g.offset).i64(6, g.compressed).i16(7, ordinal);
    });
  w.string(6, CREATED_BY);
  // Column orders: min/max statistics follow each type's own order.
  w.listHeader(7, CT.STRUCT, file.columns.length);
  for (let i = 0; i < file.columns.length; i++) w.elemStruct((o) => o.struct(1));
  w.stop();
  return w.bytes();
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
