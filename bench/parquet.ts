import { createRequire } from "node:module";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { benchRows } from "../harness/export-rows.ts";
import type { Compression } from "../shared/export/parquet/codecs.ts";
import type { FormatVersion } from "../shared/export/parquet/columns.ts";
import { ParquetFileWriter } from "../shared/export/parquet/writer.ts";
import { zstdBackend } from "../shared/export/zstd.ts";
import {
  EXPORT_FIELDS,
  type ExportField,
  type ExportRow,
  FIELD_KINDS,
} from "../shared/records/export-fields.ts";

// The Parquet encoder alone, over realistic exported runs (all 29 fields, ~1 KB each: inputs/outputs JSON,
// tags, parent ids, timestamps): rows/s of each candidate writer that is installed, then of the chosen one
// (shared/export/parquet/) per format version and codec. Run: node --import tsx bench/parquet.ts [rows]
// Candidates not in this repo's node_modules are also looked for under $PARQUET_BENCH_NODE_MODULES (a
// scratch install), and skipped when absent. Every candidate writes v1-shaped files (lists as JSON text,
// microsecond timestamps), uncompressed, 10,000-row groups, from the same ExportRow objects, and its time
// includes converting those rows to what it takes.

const GROUP = 10_000;

const rowBytes = (r: ExportRow) =>
  Object.values(r).reduce<number>(
    (n, v) =>
      n +
      (v == null
        ? 0
        : typeof v === "string"
          ? Buffer.byteLength(v)
          : Array.isArray(v)
            ? JSON.stringify(v).length
            : 8),
    0,
  );

/** Epoch microseconds of a canonical time, the plain way (Date.parse plus the last three digits). */
const micros = (s: string) => Date.parse(s) * 1000 + Number(s.slice(23, 26));

/** One column of `size` rows from the pool (cycled) as a library's writer takes it; `timestamp` converts times. */
function columnValues(
  pool: readonly ExportRow[],
  start: number,
  size: number,
  f: ExportField,
  timestamp: (t: string) => unknown,
): unknown[] {
  const kind = FIELD_KINDS[f];
  const data = new Array(size);
  for (let i = 0; i < size; i++) {
    const v = pool[(start + i) % pool.length]![f];
    data[i] =
      v == null
        ? null
        : kind === "timestamp"
          ? timestamp(v as string)
          : kind === "int"
            ? BigInt(v as number)
            : kind === "list"
              ? JSON.stringify(v)
              : v;
  }
  return data;
}

/** A candidate writes `n` rows (cycling over `pool`) as one file and returns its size in bytes. */
type Encode = (pool: ExportRow[], n: number) => Promise<number>;
interface Candidate {
  name: string;
  load(): Promise<Encode | undefined>;
}

const scratch = process.env.PARQUET_BENCH_NODE_MODULES;
/** Imports an optional package from the repo, else from the scratch install; undefined if neither has it. */
async function optional(name: string): Promise<any> {
  try {
    return await import(name);
  } catch {}
  if (!scratch) return undefined;
  try {
    const resolved = createRequire(join(scratch, "noop.js")).resolve(name);
    return await import(pathToFileURL(resolved).href);
  } catch {
    return undefined;
  }
}

function own(formatVersion: FormatVersion, compression: Compression): Encode {
  return async (pool, n) => {
    const w = new ParquetFileWriter({
      fields: EXPORT_FIELDS,
      formatVersion,
      compression,
      rowGroupRows: GROUP,
    });
    for (let i = 0; i < n; i++) w.append(pool[i % pool.length]!);
    return (await w.finish()).length;
  };
}

/** Row objects with the values the parquetjs family takes: lists as JSON text, timestamps as BigInt micros. */
function parquetjsRow(r: ExportRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of EXPORT_FIELDS) {
    const v = r[f];
    if (v == null) continue;
    const kind = FIELD_KINDS[f];
    out[f] =
      kind === "timestamp"
        ? BigInt(micros(v as string))
        : kind === "list"
          ? JSON.stringify(v)
          : kind === "int"
            ? BigInt(v as number)
            : v;
  }
  return out;
}

function parquetjsSchema(): Record<string, { type: string; optional: true }> {
  const type = {
    string: "UTF8",
    json: "UTF8",
    list: "UTF8",
    timestamp: "TIMESTAMP_MICROS",
    int: "INT64",
    float: "DOUBLE",
    bool: "BOOLEAN",
  };
  return Object.fromEntries(
    EXPORT_FIELDS.map((f) => [f, { type: type[FIELD_KINDS[f]], optional: true as const }]),
  );
}

function parquetjsFamily(pkg: string): Candidate {
  return {
    name: pkg,
    async load() {
      const mod = await optional(pkg);
      if (!mod) return undefined;
      const { ParquetSchema, ParquetWriter } = mod.default?.ParquetWriter ? mod.default : mod;
      const schema = new ParquetSchema(parquetjsSchema());
      return async (pool, n) => {
        let bytes = 0;
        const sink = new Writable({
          write(chunk: Buffer, _enc, cb) {
            bytes += chunk.length;
            cb();
          },
        });
        const w = await ParquetWriter.openStream(schema, sink, { rowGroupSize: GROUP, useDataPageV2: false });
        for (let i = 0; i < n; i++) await w.appendRow(parquetjsRow(pool[i % pool.length]!));
        await w.close();
        return bytes;
      };
    },
  };
}

const hyparquet: Candidate = {
  name: "hyparquet-writer",
  async load() {
    const mod = await optional("hyparquet-writer");
    if (!mod) return undefined;
    const leaf = (f: ExportField) => {
      const base = { name: f, repetition_type: "OPTIONAL" };
      switch (FIELD_KINDS[f]) {
        case "timestamp":
          return {
            ...base,
            type: "INT64",
            logical_type: { type: "TIMESTAMP", isAdjustedToUTC: false, unit: "MICROS" },
          };
        case "int":
          return { ...base, type: "INT64" };
        case "float":
          return { ...base, type: "DOUBLE" };
        case "bool":
          return { ...base, type: "BOOLEAN" };
        default:
          return { ...base, type: "BYTE_ARRAY", converted_type: "UTF8" };
      }
    };
    const schema = [{ name: "root", num_children: EXPORT_FIELDS.length }, ...EXPORT_FIELDS.map(leaf)];
    return async (pool, n) => {
      const out = new mod.ByteWriter();
      const w = new mod.ParquetWriter({ writer: out, schema, codec: "UNCOMPRESSED" });
      for (let start = 0; start < n; start += GROUP) {
        const size = Math.min(GROUP, n - start);
        const columnData = EXPORT_FIELDS.map((f) => {
          return { name: f, data: columnValues(pool, start, size, f, (t) => BigInt(micros(t))) };
        });
        w.write({ columnData, rowGroupSize: size });
      }
      w.finish();
      return out.getBuffer().byteLength;
    };
  },
};

const parquetWasm: Candidate = {
  name: "parquet-wasm (+apache-arrow)",
  async load() {
    const [pw, arrow] = [await optional("parquet-wasm/node"), await optional("apache-arrow")];
    if (!pw || !arrow) return undefined;
    const type = (f: ExportField) => {
      switch (FIELD_KINDS[f]) {
        case "timestamp":
          return new arrow.TimestampMicrosecond();
        case "int":
          return new arrow.Int64();
        case "float":
          return new arrow.Float64();
        case "bool":
          return new arrow.Bool();
        default:
          return new arrow.Utf8();
      }
    };
    return async (pool, n) => {
      const batches = [];
      for (let start = 0; start < n; start += GROUP) {
        const size = Math.min(GROUP, n - start);
        const cols: Record<string, unknown> = {};
        for (const f of EXPORT_FIELDS) {
          const data = columnValues(pool, start, size, f, (t) => micros(t) / 1000);
          cols[f] = arrow.vectorFromArray(data, type(f));
        }
        batches.push(...new arrow.Table(cols).batches);
      }
      const table = pw.Table.fromIPCStream(arrow.tableToIPC(new arrow.Table(batches), "stream"));
      const props = new pw.WriterPropertiesBuilder()
        .setCompression(pw.Compression.UNCOMPRESSED)
        .setDictionaryEnabled(false)
        .setMaxRowGroupSize(GROUP)
        .build();
      return pw.writeParquet(table, props).length;
    };
  },
};

const CHOSEN = "shared/export/parquet/ (chosen)";
const candidates: Candidate[] = [
  { name: CHOSEN, load: async () => own("v1", "none") },
  parquetjsFamily("parquetjs-lite"),
  parquetjsFamily("@dsnp/parquetjs"),
  hyparquet,
  parquetWasm,
];

async function measure(encode: Encode, pool: ExportRow[], n: number) {
  await encode(pool, Math.min(n, 3 * GROUP)); // warm-up (JIT)
  // The better of two runs: this box has two cores and other work (GC threads, the OS) shares them.
  let best = Number.POSITIVE_INFINITY;
  let bytes = 0;
  for (let run = 0; run < 2; run++) {
    const t0 = performance.now();
    bytes = await encode(pool, n);
    best = Math.min(best, (performance.now() - t0) / 1000);
  }
  return { rowsPerSec: Math.round(n / best), seconds: best, bytes };
}

export interface ParquetBenchResult {
  /** The chosen writer, v1, uncompressed. */
  rowsPerSec: number;
  rows: number;
  avgRowBytes: number;
  candidates: { name: string; rowsPerSec?: number; fileBytes?: number; skipped?: string }[];
  chosen: { formatVersion: FormatVersion; compression: Compression; rowsPerSec: number; fileBytes: number }[];
}

export async function parquetEncoderBench(rows = 100_000): Promise<ParquetBenchResult> {
  const pool = benchRows(Math.min(rows, GROUP)); // one row group of distinct rows, cycled
  const avgRowBytes = Math.round(pool.reduce((n, r) => n + rowBytes(r), 0) / pool.length);
  console.log(
    `parquet encoder: ${rows} rows of ~${avgRowBytes} B (29 fields), one core, uncompressed, v1 shapes`,
  );
  const result: ParquetBenchResult = { rowsPerSec: 0, rows, avgRowBytes, candidates: [], chosen: [] };
  for (const c of candidates) {
    const encode = await c.load();
    if (!encode) {
      console.log(`  ${c.name.padEnd(52)} not installed, skipped`);
      result.candidates.push({ name: c.name, skipped: "not installed" });
      continue;
    }
    try {
      const m = await measure(encode, pool, rows);
      console.log(
        `  ${c.name.padEnd(52)} ${String(m.rowsPerSec).padStart(8)} rows/s  ${(m.bytes / 2 ** 20).toFixed(1)} MiB`,
      );
      result.candidates.push({ name: c.name, rowsPerSec: m.rowsPerSec, fileBytes: m.bytes });
      if (c.name === CHOSEN) result.rowsPerSec = m.rowsPerSec;
    } catch (err) {
      console.log(`  ${c.name.padEnd(52)} failed: ${(err as Error).message}`);
      result.candidates.push({ name: c.name, skipped: `failed: ${(err as Error).message}` });
    }
  }
  console.log(`chosen writer by format and codec (zstd via ${zstdBackend}):`);
  for (const formatVersion of ["v1", "v2_beta"] as const)
    for (const compression of ["none", "snappy", "gzip", "zstandard"] as const) {
      const m = await measure(own(formatVersion, compression), pool, rows);
      console.log(
        `  ${`${formatVersion} ${compression}`.padEnd(52)} ${String(m.rowsPerSec).padStart(8)} rows/s  ${(m.bytes / 2 ** 20).toFixed(1)} MiB`,
      );
      result.chosen.push({ formatVersion, compression, rowsPerSec: m.rowsPerSec, fileBytes: m.bytes });
    }
  return result;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  await parquetEncoderBench(Number(process.argv[2]) || undefined);
