import { afterAll, expect, inject, it } from "vitest";
import { exportSource, FINAL_STATUSES, s3Proxy, waitFor } from "../harness/export.ts";
import { type RunningPlatform, startPlatform } from "../harness/platform.ts";
import { sharedDynamoDb } from "./helpers/shared-dynamodb.ts";

/** The destination's bucket: a workspace's own S3 (the platform's is refused as one). */
const customer = inject("customerS3");

// Timeouts need limits of seconds, so each case runs its own platform with them shrunk. The run timeout is
// a retryable failure (the run resumes from its checkpoint in a new attempt); the export timeout ends the
// export TimedOut without a retry.
// The two cases mostly wait (on the slowed S3 and the timers), each on a platform of its own: they run together.
const platforms: RunningPlatform[] = [];
afterAll(async () => {
  await Promise.all(platforms.map((p) => p.stop()));
});

const shared = {
  EXPORT_PAGE_SIZE: "10",
  EXPORT_FILE_BYTES: "1",
  EXPORT_MAX_CONCURRENT_RUNS: "1",
  LOCAL_SFN_RETRY_INTERVAL_MS: "50",
  LOG_LEVEL: "error",
};

async function runExport(env: Record<string, string>, delayMs: number) {
  const platform = await startPlatform({ ...shared, ...env }, { sharedDynamoDb: sharedDynamoDb() });
  platforms.push(platform);
  const proxy = await s3Proxy(customer.s3.endpoint);
  proxy.delayMs = delayMs;
  try {
    const src = await exportSource(
      platform,
      {
        project: "timeouts",
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
      90_000,
    );
    const runs = (await src.api("GET", `/api/v1/bulk-exports/${created.json.id}/runs`)).json as any[];
    return { done, runs, sent: src.sent };
  } finally {
    await proxy.close();
  }
}

it.concurrent("a run over its timeout fails that attempt (retry_n) and resumes from its checkpoint until done", async () => {
  const { done, runs, sent } = await runExport({ EXPORT_RUN_TIMEOUT_SECONDS: "1" }, 700);
  expect(done.status).toBe("Completed");
  expect(runs).toHaveLength(1);
  expect(runs[0].retry_number).toBeGreaterThanOrEqual(1);
  expect(Object.values(runs[0].errors).some((m) => /RunTimedOut/.test(String(m)))).toBe(true);
  expect(runs[0].metadata.result.rows_written).toBe(sent.length);
});

it.concurrent("an export over the workflow timeout ends TimedOut, without retries", async () => {
  const { done, runs } = await runExport({ EXPORT_TIMEOUT_SECONDS: "2" }, 700);
  expect(done.status).toBe("TimedOut");
  expect(runs[0].status).toBe("TimedOut");
  expect(runs[0].retry_number).toBe(0);
});
