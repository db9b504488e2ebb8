import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXPORT_FIELDS, type ExportField, type ExportRow, FIELD_KINDS } from "../records/export-fields.ts";
import type { Compression } from "./parquet/codecs.ts";
import { PAGE_BYTES } from "./parquet/column-builder.ts";
import { type FormatVersion, parquetColumns } from "./parquet/columns.ts";
import { ParquetFileWriter } from "./parquet/writer.ts";
import { wasmZstd, zstdBackend, zstdCompress } from "./zstd.ts";

// The writer's files read back by DuckDB: every value of every column (nulls, empty lists, unicode, the
// timestamp instants), the column types DuckDB infers, and the schema, codecs and statistics in the footer.

const dir = mkdtempSync(join(tmpdir(), "parquet-test-"));
let conn: DuckDBConnection;
beforeAll(async () => {
  conn = await (await DuckDBInstance.create(":memory:")).connect();
});
afterAll(() => {
  conn?.closeSync();
  rmSync(dir, { recursive: true, force: true });
});

async function query(sql: string): Promise<Record<string, any>[]> {
  return (await conn.runAndReadAll(sql)).getRowObjectsJS() as Record<string, any>[];
}

let fileSeq = 0;
async function write(
  rows: ExportRow[],
  opts: {
    version?: FormatVersion;
    compression?: Compression;
    fields?: readonly ExportField[];
    groupRows?: number;
  } = {},
): Promise<string> {
  const w = new ParquetFileWriter({
    fields: opts.fields ?? EXPORT_FIELDS,
    formatVersion: opts.version ?? "v1",
    compression: opts.compression ?? "none",
    rowGroupRows: opts.groupRows,
  });
  for (const r of rows) w.append(r);
  expect(w.rows).toBe(rows.length);
  const path = join(dir, `f${++fileSeq}.parquet`);
  writeFileSync(path, await w.finish());
  return path;
}

/** Epoch microseconds of an ISO time, computed apart from the writer: Date.parse plus digits 4-6 of the fraction. */
function expectedMicros(v: unknown): bigint | null {
  if (v == null) return null;
  if (typeof v === "number") return BigInt(Math.round(v * 1000));
  const s = v as string;
  const frac = /\.(\d+)/.exec(s)?.[1] ?? "";
  return BigInt(Date.parse(s)) * 1000n + BigInt(Number(frac.padEnd(6, "0").slice(3, 6)));
}

const UNICODE = [
  "naïve café",
  "日本語のテキスト",
  "emoji 🚀🧪 and ZWJ 👩‍💻",
  "Ελληνικά",
  "עברית",
  "a\u0000b",
  "tab\tnew\nline",
];

/** Rows with every kind of value, nulls in changing patterns, empty and unicode lists. */
function sampleRows(n: number): ExportRow[] {
  const rows: ExportRow[] = [];
  for (let i = 0; i < n; i++) {
    const day = String(1 + (i % 28)).padStart(2, "0");
    rows.push({
      id: `run-${String(i).padStart(4, "0")}`,
      tenant_id: "tenant-1",
      session_id: i % 11 === 3 ? null : "session-1",
      trace_id: `trace-${Math.floor(i / 4)}`,
      parent_run_id: i % 4 === 0 ? null : `trace-${Math.floor(i / 4)}`,
      parent_run_ids: i % 4 === 0 ? [] : i % 9 === 5 ? null : [`trace-${Math.floor(i / 4)}`, `p-${i}`],
      reference_example_id: i % 6 === 1 ? `ex-${i}` : null,
      name: UNICODE[i % UNICODE.length]!,
      run_type: ["llm", "chain", "tool", "retriever"][i % 4]!,
      start_time: `2026-${String(1 + (i % 12)).padStart(2, "0")}-${day}T${String(i % 24).padStart(2, "0")}:0${i % 10}:59.${String((i * 7919) % 1_000_000).padStart(6, "0")}Z`,
      end_time: i % 5 === 2 ? null : "2024-02-29T23:59:59.999999Z",
      status: i % 7 === 0 ? "error" : "success",
      is_root: i % 3 === 0 ? null : i % 2 === 0,
      dotted_order: `20260105T100000000000Z${i}`,
      trace_tier: null,
      inputs: JSON.stringify({
        question: `${UNICODE[(i + 1) % UNICODE.length]} #${i}`,
        n: i,
        nested: { a: [1, 2, { b: null }] },
      }),
      outputs: i % 8 === 7 ? null : JSON.stringify({ answer: "x".repeat(i * 3), ok: true }),
      error: i % 7 === 0 ? `Error: boom ${i} — ünïcödé` : null,
      extra: i % 2 ? "{}" : JSON.stringify({ metadata: { k: i } }),
      events: "[]",
      tags: i % 5 === 0 ? [] : i % 13 === 6 ? null : ["a", `tag-${i}`, "🏷️ étiquette"].slice(0, 1 + (i % 3)),
      feedback_stats: i % 10 === 0 ? JSON.stringify({ score: { n: 2, avg: 0.5 } }) : null,
      total_tokens: i % 3 === 1 ? null : i === 4 ? Number.MAX_SAFE_INTEGER : i * 1000 - 5,
      prompt_tokens: i % 3 === 1 ? null : 0,
      completion_tokens: i % 3 === 1 ? null : -i,
      total_cost: i % 3 === 1 ? null : i * 0.000125,
      prompt_cost: i === 0 ? 1e-300 : 1.5,
      completion_cost: null,
      first_token_time: i % 3 ? null : "1970-01-01T00:00:00.000001Z",
    });
  }
  return rows;
}

/** Every value of `rows` against DuckDB's reading of the file (rows in file order). */
async function expectSame(
  path: string,
  rows: ExportRow[],
  fields: readonly ExportField[],
  version: FormatVersion,
) {
  const tsCols = fields.filter((f) => FIELD_KINDS[f] === "timestamp");
  const extra = tsCols.map((f) => `, epoch_us(${f}) AS "${f}__us"`).join("");
  const got = await query(`SELECT *${extra} FROM read_parquet('${path}')`);
  expect(got).toHaveLength(rows.length);
  got.forEach((g, i) => {
    const r = rows[i]!;
    for (const f of fields) {
      const want = r[f] ?? null;
      const v = g[f];
      const at = `row ${i} ${f}`;
      switch (FIELD_KINDS[f]) {
        case "string":
          expect(v, at).toBe(want);
          break;
        case "json":
          expect(v == null ? null : JSON.parse(v), at).toEqual(
            want == null ? null : JSON.parse(want as string),
          );
          break;
        case "list":
          if (version === "v2_beta") expect(v, at).toEqual(want);
          else expect(v == null ? null : JSON.parse(v), at).toEqual(want);
          break;
        case "timestamp":
          expect(g[`${f}__us`], at).toBe(expectedMicros(want));
          break;
        case "int":
          expect(v, at).toBe(want == null ? null : BigInt(want as number));
          break;
        case "float":
        case "bool":
          expect(v, at).toBe(want);
          break;
      }
    }
  });
}

const ROWS = sampleRows(50);

describe("ParquetFileWriter read back by DuckDB", () => {
  for (const version of ["v1", "v2_beta"] as const)
    for (const compression of ["none", "gzip", "snappy", "zstandard"] as const)
      it(`${version} / ${compression}: every value, in row groups of 7`, async () => {
        const path = await write(ROWS, { version, compression, groupRows: 7 });
        await expectSame(path, ROWS, EXPORT_FIELDS, version);
        const meta = await query(`SELECT DISTINCT compression, encodings FROM parquet_metadata('${path}')`);
        expect(meta).toEqual([
          {
            compression: { none: "UNCOMPRESSED", gzip: "GZIP", snappy: "SNAPPY", zstandard: "ZSTD" }[
              compression
            ],
            encodings: "PLAIN, RLE",
          },
        ]);
        const [file] = await query(`SELECT num_rows, num_row_groups FROM parquet_file_metadata('${path}')`);
        expect(file).toEqual({ num_rows: 50n, num_row_groups: 8n });
      });

  it("DESCRIBE: v1 plain timestamps and text; v2_beta UTC timestamps, lists and JSON", async () => {
    const types = async (version: FormatVersion) =>
      Object.fromEntries(
        (await query(`DESCRIBE SELECT * FROM read_parquet('${await write(ROWS, { version })}')`)).map((r) => [
          r.column_name,
          r.column_type,
        ]),
      );
    const v1 = await types("v1");
    const v2 = await types("v2_beta");
    expect(Object.keys(v1)).toEqual([...EXPORT_FIELDS]);
    expect(Object.keys(v2)).toEqual([...EXPORT_FIELDS]);
    const expected: Record<string, [string, string]> = {
      string: ["VARCHAR", "VARCHAR"],
      json: ["VARCHAR", "JSON"],
      list: ["VARCHAR", "VARCHAR[]"],
      timestamp: ["TIMESTAMP", "TIMESTAMP WITH TIME ZONE"],
      int: ["BIGINT", "BIGINT"],
      float: ["DOUBLE", "DOUBLE"],
      bool: ["BOOLEAN", "BOOLEAN"],
    };
    for (const f of EXPORT_FIELDS) {
      expect(v1[f], `v1 ${f}`).toBe(expected[FIELD_KINDS[f]]![0]);
      expect(v2[f], `v2_beta ${f}`).toBe(expected[FIELD_KINDS[f]]![1]);
    }
  });

  it("parquet_schema: logical and converted types as intended", async () => {
    const schema = async (version: FormatVersion) => {
      const rows = await query(
        `SELECT name, type, converted_type, logical_type, repetition_type, num_children FROM parquet_schema('${await write(ROWS.slice(0, 3), { version })}')`,
      );
      return rows;
    };
    const v1 = await schema("v1");
    const v1ByName = Object.fromEntries(v1.map((r) => [r.name, r]));
    expect(v1).toHaveLength(1 + EXPORT_FIELDS.length); // root + one leaf per field
    expect(v1ByName.start_time).toMatchObject({
      type: "INT64",
      converted_type: "TIMESTAMP_MICROS",
      repetition_type: "OPTIONAL",
    });
    expect(v1ByName.start_time.logical_type).toMatch(
      /^TimestampType\(isAdjustedToUTC=0, .*MICROS=MicroSeconds\(\)/,
    );
    expect(v1ByName.start_time.logical_type).toMatch(/NANOS=<null>/);
    for (const f of ["inputs", "tags", "parent_run_ids", "name"])
      expect(v1ByName[f], f).toMatchObject({
        type: "BYTE_ARRAY",
        converted_type: "UTF8",
        logical_type: "StringType()",
      });
    expect(v1ByName.total_tokens).toMatchObject({ type: "INT64", converted_type: null, logical_type: null });
    expect(v1ByName.total_cost).toMatchObject({ type: "DOUBLE" });
    expect(v1ByName.is_root).toMatchObject({ type: "BOOLEAN" });
    expect(v1.slice(1).every((r) => r.repetition_type === "OPTIONAL")).toBe(true);

    const v2 = await schema("v2_beta");
    expect(v2).toHaveLength(1 + EXPORT_FIELDS.length + 2 * 2); // tags and parent_run_ids add list + element
    const v2ByName = Object.fromEntries(v2.map((r) => [r.name, r]));
    expect(v2ByName.start_time.logical_type).toMatch(
      /^TimestampType\(isAdjustedToUTC=1, .*MICROS=MicroSeconds\(\)/,
    );
    for (const f of ["inputs", "outputs", "extra", "events", "feedback_stats"])
      expect(v2ByName[f], f).toMatchObject({
        type: "BYTE_ARRAY",
        converted_type: "JSON",
        logical_type: "JsonType()",
      });
    expect(v2ByName.error).toMatchObject({ converted_type: "UTF8", logical_type: "StringType()" });
    const tags = v2.findIndex((r) => r.name === "tags");
    expect(v2.slice(tags, tags + 3)).toEqual([
      {
        name: "tags",
        type: null,
        converted_type: "LIST",
        logical_type: "ListType()",
        repetition_type: "OPTIONAL",
        num_children: 1n,
      },
      {
        name: "list",
        type: null,
        converted_type: null,
        logical_type: null,
        repetition_type: "REPEATED",
        num_children: 1n,
      },
      {
        name: "element",
        type: "BYTE_ARRAY",
        converted_type: "UTF8",
        logical_type: "StringType()",
        repetition_type: "OPTIONAL",
        num_children: null,
      },
    ]);
  });

  it("statistics: null counts and min/max per row group, and filters that use them", async () => {
    const path = await write(ROWS, { groupRows: 10 });
    const stats = await query(
      `SELECT row_group_id, path_in_schema, stats_null_count, stats_min_value, stats_max_value FROM parquet_metadata('${path}') WHERE path_in_schema IN ('total_tokens', 'session_id', 'start_time') ORDER BY row_group_id, path_in_schema`,
    );
    for (let g = 0; g < 5; g++) {
      const group = ROWS.slice(g * 10, g * 10 + 10);
      const tokens = group.map((r) => r.total_tokens).filter((v) => v != null) as number[];
      const byPath = Object.fromEntries(
        stats.filter((s) => s.row_group_id === BigInt(g)).map((s) => [s.path_in_schema, s]),
      );
      expect(byPath.total_tokens).toMatchObject({
        stats_null_count: BigInt(group.filter((r) => r.total_tokens == null).length),
        stats_min_value: String(Math.min(...tokens)),
        stats_max_value: String(Math.max(...tokens)),
      });
      expect(byPath.session_id.stats_null_count).toBe(
        BigInt(group.filter((r) => r.session_id == null).length),
      );
      const starts = group.map((r) => expectedMicros(r.start_time)!);
      const [min] = starts.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const [ts] = await query(`SELECT make_timestamp(${min}::BIGINT)::VARCHAR AS v`);
      expect(byPath.start_time.stats_min_value).toBe(ts!.v);
    }
    // Filters are answered right whether or not a row group is skipped on its statistics.
    const [c1] = await query(`SELECT count(*) AS n FROM read_parquet('${path}') WHERE total_tokens > 30000`);
    expect(c1!.n).toBe(
      BigInt(ROWS.filter((r) => r.total_tokens != null && (r.total_tokens as number) > 30000).length),
    );
    const [c2] = await query(
      `SELECT count(*) AS n FROM read_parquet('${path}') WHERE start_time < TIMESTAMP '2026-03-01' AND session_id IS NULL`,
    );
    expect(c2!.n).toBe(
      BigInt(ROWS.filter((r) => (r.start_time as string) < "2026-03-01" && r.session_id == null).length),
    );
  });

  it("writes only the chosen fields, in the order given", async () => {
    const fields = ["tags", "id", "start_time", "inputs", "is_root"] as const;
    for (const version of ["v1", "v2_beta"] as const) {
      const path = await write(ROWS, { version, fields, compression: "snappy", groupRows: 16 });
      const cols = (await query(`DESCRIBE SELECT * FROM read_parquet('${path}')`)).map((r) => r.column_name);
      expect(cols).toEqual([...fields]);
      await expectSame(path, ROWS, fields, version);
    }
  });

  it("an empty file has the schema and no rows", async () => {
    for (const version of ["v1", "v2_beta"] as const) {
      const path = await write([], { version, compression: "gzip" });
      const [n] = await query(`SELECT count(*) AS n FROM read_parquet('${path}')`);
      expect(n!.n).toBe(0n);
      const cols = await query(`DESCRIBE SELECT * FROM read_parquet('${path}')`);
      expect(cols).toHaveLength(EXPORT_FIELDS.length);
    }
  });

  it("rows with every field absent, and irregular null patterns (RLE and bit-packed levels)", async () => {
    // A seeded pseudo-random mix of long runs and short alternations of nulls.
    let seed = 42;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const rows: ExportRow[] = [];
    let nullRun = false;
    for (let i = 0; i < 3000; i++) {
      if (rnd() < 0.15) nullRun = !nullRun;
      const sparse = nullRun || rnd() < 0.3;
      rows.push(
        i % 500 === 0
          ? {}
          : {
              id: `r${i}`,
              total_tokens: sparse ? null : i,
              is_root: sparse ? undefined : rnd() < 0.5,
              tags: sparse
                ? null
                : rnd() < 0.2
                  ? []
                  : Array.from({ length: 1 + Math.floor(rnd() * 4) }, (_, k) => `t${k}`),
              start_time: sparse ? null : "2026-01-05T10:00:00.000000Z",
            },
      );
    }
    for (const version of ["v1", "v2_beta"] as const) {
      const path = await write(rows, { version, compression: "zstandard", groupRows: 1000 });
      await expectSame(path, rows, EXPORT_FIELDS, version);
    }
  });

  it("long values: a column chunk cut into several pages", async () => {
    const big = (i: number) => JSON.stringify({ blob: `${i}:${"ø".repeat(150_000)}` });
    const rows: ExportRow[] = Array.from({ length: 20 }, (_, i) => ({
      id: `r${i}`,
      inputs: i % 3 === 2 ? null : big(i),
      tags: Array.from({ length: 3 }, (_, k) => `${k}${"t".repeat(200_000)}`),
    }));
    for (const version of ["v1", "v2_beta"] as const) {
      const path = await write(rows, { version, compression: "snappy", fields: ["id", "inputs", "tags"] });
      await expectSame(path, rows, ["id", "inputs", "tags"], version);
      const [pages] = await query(
        `SELECT total_compressed_size > 0 AS ok, total_uncompressed_size AS size FROM parquet_metadata('${path}') WHERE path_in_schema LIKE 'inputs%'`,
      );
      expect(pages!.size).toBeGreaterThan(3 * PAGE_BYTES); // several pages' worth in one chunk
    }
  });

  it("timestamps in other forms become the same instants; bad ones throw without taking the row", async () => {
    const forms: [unknown, string][] = [
      ["2026-01-05T10:00:00Z", "2026-01-05T10:00:00.000000Z"],
      ["2026-01-05T12:00:00.5+02:00", "2026-01-05T10:00:00.500000Z"],
      ["2026-01-05 10:00:00.1234567", "2026-01-05T10:00:00.123456Z"],
      [Date.parse("2026-01-05T10:00:00.25Z"), "2026-01-05T10:00:00.250000Z"],
      // Past 2^53 microseconds (after 2255): written exactly, not rounded through a double.
      ["9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.999999Z"],
    ];
    const w = new ParquetFileWriter({
      fields: ["id", "start_time"],
      formatVersion: "v2_beta",
      compression: "none",
    });
    forms.forEach(([v], i) => {
      w.append({ id: `ok${i}`, start_time: v as string });
    });
    expect(() => w.append({ id: "bad", start_time: "yesterday" })).toThrow(
      /start_time: expected a UTC timestamp/,
    );
    expect(() => w.append({ id: "bad", start_time: "2026-13-05T10:00:00.000000Z" })).toThrow(TypeError);
    expect(() => w.append({ id: "bad2", total_tokens: "many", start_time: "" } as ExportRow)).not.toThrow(); // "" is null
    expect(w.rows).toBe(forms.length + 1);
    const path = join(dir, "forms.parquet");
    writeFileSync(path, await w.finish());
    const got = await query(`SELECT id, epoch_us(start_time) AS us FROM read_parquet('${path}')`);
    expect(got).toEqual([
      ...forms.map(([, canonical], i) => ({ id: `ok${i}`, us: expectedMicros(canonical) })),
      { id: "bad2", us: null },
    ]);
    expect(got.find((g) => g.id === `ok${forms.length - 1}`)!.us).toBe(253402300799999999n);
    const ints = new ParquetFileWriter({
      fields: ["id", "total_tokens"],
      formatVersion: "v1",
      compression: "none",
    });
    expect(() => ints.append({ id: "x", total_tokens: "many" as never })).toThrow(
      /total_tokens: expected an integer/,
    );
    ints.append({ id: "y", total_tokens: "12" as never });
    const intsPath = join(dir, "ints.parquet");
    writeFileSync(intsPath, await ints.finish());
    expect(await query(`SELECT * FROM read_parquet('${intsPath}')`)).toEqual([
      { id: "y", total_tokens: 12n },
    ]);
  });

  it("memory: rows are encoded as they arrive; bytes tracks the file size", async () => {
    const rows = sampleRows(250);
    const w = new ParquetFileWriter({
      fields: EXPORT_FIELDS,
      formatVersion: "v1",
      compression: "none",
      rowGroupRows: 100,
    });
    let last = w.bytes;
    for (const r of rows) {
      w.append(r);
      expect(w.bytes).toBeGreaterThan(last);
      last = w.bytes;
    }
    const file = await w.finish();
    // Uncompressed, the estimate is the file less its page headers and footer.
    expect(last).toBeLessThanOrEqual(file.length);
    expect(last).toBeGreaterThan(file.length * 0.8);
    expect(() => w.append(rows[0]!)).toThrow(/after finish/);
  });

  it("rejects bad options", () => {
    const base = { fields: EXPORT_FIELDS, formatVersion: "v1", compression: "none" } as const;
    expect(() => new ParquetFileWriter({ ...base, fields: [] })).toThrow();
    expect(() => new ParquetFileWriter({ ...base, fields: ["id", "id"] })).toThrow(/twice/);
    expect(() => new ParquetFileWriter({ ...base, fields: ["nope" as ExportField] })).toThrow(/unknown/);
    expect(() => new ParquetFileWriter({ ...base, compression: "lz4" as Compression })).toThrow(
      /compression/,
    );
    expect(() => new ParquetFileWriter({ ...base, rowGroupRows: 0 })).toThrow(/rowGroupRows/);
  });

  it("parquetColumns describes the leaves", () => {
    const v2 = parquetColumns(["tags", "start_time", "inputs"], "v2_beta");
    expect(
      v2.map((c) => [c.path.join("."), c.physicalType, c.maxDefinitionLevel, c.maxRepetitionLevel]),
    ).toEqual([
      ["tags.list.element", "BYTE_ARRAY", 3, 1],
      ["start_time", "INT64", 1, 0],
      ["inputs", "BYTE_ARRAY", 1, 0],
    ]);
    expect(parquetColumns(["start_time"], "v1")[0]!.schema.logicalType).toEqual({
      type: "TIMESTAMP",
      unit: "MICROS",
      isAdjustedToUTC: false,
    });
  });
});

describe("zstd", () => {
  it(`compresses through ${zstdBackend}, and the wasm build round-trips`, () => {
    const data = new TextEncoder().encode(JSON.stringify(sampleRows(200)));
    const z = wasmZstd();
    const packed = z.compress(data);
    expect(packed.length).toBeLessThan(data.length / 4);
    expect(Buffer.from(z.decompress(packed, data.length)).equals(Buffer.from(data))).toBe(true);
    const auto = zstdCompress(data);
    expect(Buffer.from(z.decompress(auto, data.length)).equals(Buffer.from(data))).toBe(true);
    expect(z.compress(new Uint8Array(0)).length).toBeGreaterThan(0);
  });
});
