import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, describe, expect, it } from "vitest";
import { EXPORT_FIELDS, type ExportField, type ExportRow } from "./fields.ts";
import {
  type Compression,
  type FormatVersion,
  ParquetFileWriter,
  prepareCompression,
} from "./parquet-writer.ts";

// The writer's files, read back by DuckDB: values, nulls, lists, timestamps, codecs and logical types.
const dir = mkdtempSync(join(tmpdir(), "parquet-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function query(sql: string) {
  const db = await DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  const reader = await conn.runAndReadAll(sql);
  return reader.getRowObjectsJS() as Record<string, any>[];
}

function row(i: number): ExportRow {
  return {
    id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    tenant_id: "t1",
    session_id: "s1",
    trace_id: `trace-${i}`,
    parent_run_id: i % 2 ? `p-${i}` : null,
    parent_run_ids: i % 2 ? [`p-${i}`, `q-${i}`] : [],
    reference_example_id: null,
    name: `naïve ✓ ${i}`,
    run_type: i % 3 ? "chain" : "llm",
    start_time: `2026-01-05T10:00:${String(i % 60).padStart(2, "0")}.123456Z`,
    end_time: i % 4 ? `2026-01-05T10:01:00.000001Z` : null,
    status: "success",
    is_root: i % 2 === 0,
    dotted_order: `20260105T100000123456Z${i}`,
    trace_tier: null,
    inputs: JSON.stringify({ q: `question ${i}`, n: i }),
    outputs: i % 5 ? JSON.stringify({ a: [1, 2, i] }) : null,
    error: i % 7 ? null : "boom",
    extra: "{}",
    events: "[]",
    tags: i % 3 ? ["a", `t${i}`] : [],
    feedback_stats: null,
    total_tokens: i % 3 ? null : 30 + i,
    prompt_tokens: i,
    completion_tokens: 0,
    total_cost: i % 3 ? null : 0.000125 * i,
    prompt_cost: 1.5,
    completion_cost: null,
    first_token_time: i % 3 ? null : "2026-01-05T10:00:00.5Z",
  };
}

async function write(
  name: string,
  version: FormatVersion,
  compression: Compression,
  rows: ExportRow[],
  fields: readonly ExportField[] = EXPORT_FIELDS,
) {
  await prepareCompression(compression);
  const w = new ParquetFileWriter({ fields, formatVersion: version, compression, rowGroupRows: 7 });
  for (const r of rows) w.append(r);
  expect(w.rows).toBe(rows.length);
  const path = join(dir, name);
  writeFileSync(path, await w.finish());
  return path;
}

const rows = Array.from({ length: 50 }, (_, i) => row(i));

describe("Parquet writer", () => {
  for (const version of ["v1", "v2_beta"] as const)
    for (const compression of ["none", "gzip", "snappy", "zstandard"] as const)
      it(`${version} / ${compression}: DuckDB reads back every value`, async () => {
        const path = await write(`${version}-${compression}.parquet`, version, compression, rows);
        const got = await query(
          `SELECT *, epoch_us(start_time) AS start_us, epoch_us(first_token_time) AS ftt_us FROM read_parquet('${path}') ORDER BY id`,
        );
        expect(got).toHaveLength(rows.length);
        got.forEach((g, i) => {
          const r = rows[i]!;
          expect(g.id).toBe(r.id);
          expect(g.name).toBe(r.name);
          expect(g.parent_run_id).toBe(r.parent_run_id);
          expect(g.is_root).toBe(r.is_root);
          expect(g.error).toBe(r.error);
          expect(g.total_tokens == null ? null : Number(g.total_tokens)).toBe(r.total_tokens);
          expect(g.total_cost).toBe(r.total_cost);
          expect(Number(g.start_us)).toBe(Date.parse(r.start_time as string) * 1000 + 456);
          expect(g.ftt_us == null ? null : Number(g.ftt_us)).toBe(
            r.first_token_time ? Date.parse(r.first_token_time as string) * 1000 : null,
          );
          expect(g.end_time == null).toBe(r.end_time == null);
          const tags = version === "v2_beta" ? g.tags : JSON.parse(g.tags);
          expect(tags).toEqual(r.tags);
          const ids = version === "v2_beta" ? g.parent_run_ids : JSON.parse(g.parent_run_ids);
          expect(ids).toEqual(r.parent_run_ids);
          const outputs = typeof g.outputs === "string" ? JSON.parse(g.outputs) : g.outputs;
          expect(outputs).toEqual(r.outputs == null ? null : JSON.parse(r.outputs as string));
        });
        const meta = await query(`SELECT DISTINCT compression FROM parquet_metadata('${path}')`);
        expect(meta.map((m) => m.compression)).toEqual([
          { none: "UNCOMPRESSED", gzip: "GZIP", snappy: "SNAPPY", zstandard: "ZSTD" }[compression],
        ]);
        const groups = await query(
          `SELECT count(DISTINCT row_group_id) AS n FROM parquet_metadata('${path}')`,
        );
        expect(Number(groups[0]!.n)).toBe(Math.ceil(rows.length / 7));
      });

  it("types: v1 plain timestamps and text; v2_beta UTC timestamps, lists and JSON", async () => {
    const types = async (version: FormatVersion) =>
      Object.fromEntries(
        (
          await query(
            `DESCRIBE SELECT * FROM read_parquet('${await write(`t-${version}.parquet`, version, "none", rows)}')`,
          )
        ).map((r) => [r.column_name, r.column_type]),
      );
    const v1 = await types("v1");
    expect(v1).toMatchObject({
      start_time: "TIMESTAMP",
      tags: "VARCHAR",
      inputs: "VARCHAR",
      total_tokens: "BIGINT",
      total_cost: "DOUBLE",
      is_root: "BOOLEAN",
    });
    const v2 = await types("v2_beta");
    expect(v2).toMatchObject({
      start_time: "TIMESTAMP WITH TIME ZONE",
      tags: "VARCHAR[]",
      parent_run_ids: "VARCHAR[]",
      inputs: "JSON",
      total_tokens: "BIGINT",
    });
    const schema = await query(
      `SELECT name, logical_type FROM parquet_schema('${join(dir, "t-v1.parquet")}') WHERE name = 'start_time'`,
    );
    expect(String(schema[0]!.logical_type)).toMatch(/isAdjustedToUTC=0.*MICROS|MICROS.*isAdjustedToUTC=0/i);
  });

  it("writes only the chosen fields", async () => {
    const fields = ["id", "tags", "start_time"] as const;
    const path = await write("subset.parquet", "v2_beta", "gzip", rows, fields);
    const cols = (await query(`DESCRIBE SELECT * FROM read_parquet('${path}')`)).map((r) => r.column_name);
    expect(cols).toEqual([...fields]);
  });

  it("keeps memory to one row group: rows are encoded as each group fills", async () => {
    const w = new ParquetFileWriter({
      fields: EXPORT_FIELDS,
      formatVersion: "v1",
      compression: "none",
      rowGroupRows: 100,
    });
    for (let i = 0; i < 250; i++) w.append(row(i));
    expect((w as any).buffered.length).toBe(50);
    expect(w.bytes).toBeGreaterThan(4);
  });
});
