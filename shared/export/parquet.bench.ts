import { bench, describe } from "vitest";
import { benchRows } from "../../harness/export-rows.ts";
import { EXPORT_FIELDS } from "../records/export-fields.ts";
import type { Compression } from "./parquet/codecs.ts";
import type { FormatVersion } from "./parquet/columns.ts";
import { ParquetFileWriter } from "./parquet/writer.ts";

// Micro-benchmarks of the Parquet writer over 10k synthetic exported runs (all 29 fields, ~1 KB each, the
// rows of harness/export-rows.ts): the column builders alone (append, no row group closed), then whole files.
// Run: npx vitest bench --run shared/export/parquet.bench.ts. The end-to-end figures are `npm run bench -- parquet`.
const ROWS = benchRows(10_000);
const opts = { time: 500, iterations: 10, warmupIterations: 2 };

function write(formatVersion: FormatVersion, compression: Compression, rowGroupRows?: number) {
  const w = new ParquetFileWriter({ fields: EXPORT_FIELDS, formatVersion, compression, rowGroupRows });
  for (const r of ROWS) w.append(r);
  return w;
}

describe("ParquetFileWriter, 10k rows × 29 fields", () => {
  bench("append only (convert values, build columns)", () => void write("v1", "none", 20_000), opts);
  bench("file, v1, uncompressed", () => void write("v1", "none").finishParts(), opts);
  bench("file, v2_beta, uncompressed", () => void write("v2_beta", "none").finishParts(), opts);
  bench("file, v1, snappy", () => void write("v1", "snappy").finishParts(), opts);
  bench("file, v1, gzip", () => void write("v1", "gzip").finishParts(), opts);
});
