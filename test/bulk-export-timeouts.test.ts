import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { exportSource, FINAL_STATUSES, s3Proxy, waitFor } from "../harness/export.ts";
import { type RunningPlatform, startPlatform } from "../harness/platform.ts";
import { sharedDynamoDb } from "./helpers/shared-dynamodb.ts";

/** The destination's bucket: a workspace's own S3 (the platform's is refused as one). */
const customer = inject("customerS3");

// Timeouts need limits of seconds, so the file runs a platform of its own with them shrunk: an attempt of an export
// run may take 1 s, a whole export 30 s. The run timeout is a retryable failure (the run resumes from its
// checkpoint in a new attempt); the export timeout ends the export TimedOut without a retry. The two cases share the
// platform and run together, each with a tracing project and a destination of its own (a proxy slowing its uploads to
// meet the timeout it tries).
const SETTINGS = {
  EXPORT_PAGE_SIZE: "10",
  EXPORT_FILE_BYTES: "1",
  EXPORT_MAX_CONCURRENT_RUNS: "1",
  LOCAL_SFN_RETRY_INTERVAL_MS: "50",
  LOG_LEVEL: "error",
  EXPORT_RUN_TIMEOUT_SECONDS: "1",
  EXPORT_TIMEOUT_SECONDS: "30",
};
let platform: RunningPlatform | undefined;
beforeAll(async () => {
  platform = await startPlatform(SETTINGS, { sharedDynamoDb: sharedDynamoDb() });
}, 180_000);
afterAll(async () => {
  await platform?.stop();
});

async function runExport(project: string, delayMs: number) {
  if (!platform) throw new Error("the platform did not start");
  const proxy = await s3Proxy(customer.s3.endpoint);
  proxy.delayMs = delayMs;
  try {
    const src = await exportSource(
      platform,
      {
        project,
        firstDay: "2026-05-01",
        days: 1,
        perDay: 40,
        bucket: `timeouts-${crypto.randomUUID().slice(0, 8)}`,
        endpoint: proxy.endpoint,
      },
      customer,
    );
    const created = await src.api("POST", "/api/v1/bulk-exports", {
      bulk_export_destination_id: src.destination,
      session_id: src.project,
      start_time: "2026-05-01T00:00:00Z",
      end_time: "2026-05-02T00:00:00Z",
    });
    expect(created.status).toBe(200);
    const done = await waitFor(
      "the export to finish",
      async () => {
        const r = await src.api("GET", `/api/v1/bulk-exports/${created.json.id}`);
        return FINAL_STATUSES.includes(r.json.status) ? r.json : undefined;
      },
      120_000,
    );
    const runs = (await src.api("GET", `/api/v1/bulk-exports/${created.json.id}/runs`)).json as any[];
    return { done, runs, sent: src.sent };
  } finally {
    await proxy.close();
  }
}

it.concurrent("a run over its timeout fails that attempt (retry_n) and resumes from its checkpoint until done", async () => {
  // A file per 700 ms: each attempt ends after a file or two, well within the export's 30 s.
  const { done, runs, sent } = await runExport("run-timeout", 700);
  expect(done.status).toBe("Completed");
  expect(runs).toHaveLength(1);
  expect(runs[0].retry_number).toBeGreaterThanOrEqual(1);
  expect(Object.values(runs[0].errors).some((m) => /RunTimedOut/.test(String(m)))).toBe(true);
  expect(runs[0].metadata.result.rows_written).toBe(sent.length);
});

it.concurrent("an export over the workflow timeout ends TimedOut, without retries", async () => {
  // Its first upload answers after the export's 30 s: the run never reaches its own 1 s check before the export's.
  const { done, runs } = await runExport("export-timeout", 35_000);
  expect(done.status).toBe("TimedOut");
  expect(runs[0].status).toBe("TimedOut");
  expect(runs[0].retry_number).toBe(0);
});
