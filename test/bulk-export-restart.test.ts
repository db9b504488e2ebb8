import { rmSync } from "node:fs";
import { afterAll, expect, inject, it } from "vitest";
import {
  download,
  duck,
  exportSource,
  FINAL_STATUSES,
  platformApi,
  s3For,
  s3Proxy,
  waitFor,
} from "../harness/export.ts";
import { type RunningPlatform, startPlatform } from "../harness/platform.ts";
import { sharedDynamoDb } from "./helpers/shared-dynamodb.ts";

/** The destination's bucket: a workspace's own S3 (the platform's is refused as one). */
const customer = inject("customerS3");

// The trap DESIGN.md names: local executions die with the process. Kill -9 the platform mid-export, start
// it again on the same data: the export must end Completed with exactly the source rows.
let platform: RunningPlatform | undefined;
const dirs: string[] = [];
afterAll(async () => {
  await platform?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

it("killing the platform mid-export and starting it again ends in Completed with every row exactly once", async () => {
  const env = {
    EXPORT_PAGE_SIZE: "25",
    EXPORT_FILE_BYTES: "1",
    EXPORT_MAX_CONCURRENT_RUNS: "1",
    LOCAL_SFN_RETRY_INTERVAL_MS: "100",
    LOG_LEVEL: "error",
  };
  platform = await startPlatform(env, { sharedDynamoDb: sharedDynamoDb() });
  const proxy = await s3Proxy(customer.s3.endpoint);
  const bucket = `restart-${crypto.randomUUID().slice(0, 8)}`;
  proxy.delayMs = 250;
  try {
    const src = await exportSource(
      platform,
      { project: "restart", firstDay: "2026-04-01", days: 3, perDay: 100, bucket, endpoint: proxy.endpoint },
      customer,
    );
    const { sent, project } = src;
    let api = src.api;
    const created = await api("POST", "/api/v1/bulk-exports", {
      bulk_export_destination_id: src.destination,
      session_id: project,
      start_time: "2026-04-01T00:00:00Z",
      end_time: "2026-04-04T00:00:00Z",
    });
    expect(created.status).toBe(200);
    const id = created.json.id;
    await waitFor("a few files written", async () => {
      const runs = (await api("GET", `/api/v1/bulk-exports/${id}/runs`)).json as any[];
      const files = runs.reduce((n, r) => n + r.metadata.result.exported_files.length, 0);
      return files >= 3;
    });
    platform = await platform.crashAndRestart();
    api = platformApi(platform);
    const done = await waitFor(
      "the export to finish after the restart",
      async () => {
        const r = await api("GET", `/api/v1/bulk-exports/${id}`);
        return FINAL_STATUSES.includes(r.json.status) ? r.json : undefined;
      },
      90_000,
    );
    expect(done.status).toBe("Completed");
    const runs = (await api("GET", `/api/v1/bulk-exports/${id}/runs`)).json as any[];
    expect(runs.some((r) => Object.values(r.errors).some((m) => /Interrupted/.test(String(m))))).toBe(true);
    expect(runs.reduce((n, r) => n + r.metadata.result.rows_written, 0)).toBe(sent.length);

    const { dir } = await download(s3For(customer), bucket, "x/");
    dirs.push(dir);
    const rows = await duck(`SELECT id FROM read_parquet('${dir}/x/**/*.parquet', hive_partitioning=true)`);
    expect(rows).toHaveLength(sent.length);
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(sent.map((r) => r.id)));
  } finally {
    await proxy.close();
  }
});
