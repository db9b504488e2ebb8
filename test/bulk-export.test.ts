import { rmSync } from "node:fs";
import { DeleteBucketCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  download,
  duck,
  newBucket,
  newWorkspace,
  runsOverDays,
  s3For,
  s3Proxy,
  waitFor,
} from "../harness/export.ts";
import { call, customer } from "./helpers/cloud.ts";

// Bulk export end to end on the local cloud: runs ingested over three days, exported by the real state
// machine to the local S3, read back with DuckDB.
const DAYS = ["2026-03-01", "2026-03-02", "2026-03-03"];
const PER_DAY = 30;

let ws: Awaited<ReturnType<typeof newWorkspace>>;
let project: string;
let sent: Record<string, unknown>[];
const dirs: string[] = [];

async function destination(
  bucket: string,
  over: Record<string, unknown> = {},
  endpoint = customer.s3.endpoint,
) {
  const r = await call("POST", "/api/v1/bulk-exports/destinations", {
    headers: ws.headers,
    body: {
      destination_type: "s3",
      display_name: `dest ${bucket}`,
      config: { bucket_name: bucket, prefix: "exports/team", endpoint_url: endpoint, ...over },
      credentials: {
        access_key_id: customer.s3.access_key_id,
        secret_access_key: customer.s3.secret_access_key,
      },
    },
  });
  expect(r.status, r.text).toBe(200);
  return r.json.id as string;
}

async function createExport(body: Record<string, unknown>, headers = ws.headers) {
  return call("POST", "/api/v1/bulk-exports", {
    headers,
    body: {
      session_id: project,
      start_time: `${DAYS[0]}T00:00:00Z`,
      end_time: "2026-03-04T00:00:00Z",
      ...body,
    },
  });
}

const FINAL = ["Completed", "Failed", "Cancelled", "TimedOut"];
async function finished(id: string, timeoutMs = 60_000) {
  return waitFor(
    `export ${id} to finish`,
    async () => {
      const r = await call("GET", `/api/v1/bulk-exports/${id}`, { headers: ws.headers });
      return FINAL.includes(r.json.status) ? r.json : undefined;
    },
    timeoutMs,
  );
}

async function exportedRows(bucket: string, exportId: string, columns = "*") {
  const { dir, keys } = await download(s3For(customer), bucket, "exports/team/");
  dirs.push(dir);
  const rows = await duck(
    `SELECT ${columns} FROM read_parquet('${dir}/exports/team/export_id=${exportId}/**/*.parquet', hive_partitioning=true)`,
  );
  return { rows, keys, dir };
}

beforeAll(async () => {
  ws = await newWorkspace();
  const name = `export-src-${crypto.randomUUID().slice(0, 6)}`;
  sent = runsOverDays(name, DAYS[0], DAYS.length, PER_DAY);
  for (let i = 0; i < sent.length; i += 50) {
    const r = await call("POST", "/api/v1/runs/batch", {
      headers: ws.headers,
      body: { post: sent.slice(i, i + 50) },
    });
    expect(r.status).toBe(202);
  }
  project = (await call("GET", `/api/v1/sessions?name=${name}`, { headers: ws.headers })).json[0].id;
});

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("bulk export to S3 as Parquet", () => {
  it("exports three days in the Hive layout; DuckDB sees the same rows and ids", async () => {
    const bucket = await newBucket(customer);
    const dest = await destination(bucket);
    const created = await createExport({ bulk_export_destination_id: dest });
    expect(created.status, created.text).toBe(200);
    expect(created.json).toMatchObject({ format: "Parquet", format_version: "v1", session_id: project });
    const done = await finished(created.json.id);
    expect(done.status).toBe("Completed");
    expect(done.finished_at).toBeTruthy();

    const { rows, keys } = await exportedRows(
      bucket,
      done.id,
      "id, run_type, year, month, day, tenant_id, start_time",
    );
    expect(rows).toHaveLength(sent.length);
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(sent.map((r) => r.id)));
    for (const key of keys)
      expect(key).toMatch(
        new RegExp(
          `^exports/team/export_id=${done.id}/tenant_id=${ws.tenant}/session_id=${project}/runs/year=2026/month=03/day=0[123]/part-\\d{5}\\.parquet$`,
        ),
      );
    expect(rows.every((r) => r.tenant_id === ws.tenant)).toBe(true);

    const runs = (await call("GET", `/api/v1/bulk-exports/${done.id}/runs`, { headers: ws.headers })).json;
    expect(runs).toHaveLength(3);
    expect(runs.map((r: any) => r.metadata.result.rows_written)).toEqual([PER_DAY, PER_DAY, PER_DAY]);
    expect(runs.every((r: any) => r.status === "Completed" && r.retry_number === 0)).toBe(true);
    const one = await call("GET", `/api/v1/bulk-exports/${done.id}/runs/${runs[1].id}`, {
      headers: ws.headers,
    });
    expect(one.json.metadata.result.exported_files).toEqual(runs[1].metadata.result.exported_files);
  });

  it("a filter exports only matching runs; a day with no runs completes with 0 rows and no file", async () => {
    const bucket = await newBucket(customer);
    const dest = await destination(bucket);
    const created = await createExport({
      bulk_export_destination_id: dest,
      filter: 'and(eq(run_type, "llm"), has(tags, "prod"))',
      end_time: "2026-03-05T00:00:00Z",
    });
    const done = await finished(created.json.id);
    expect(done.status).toBe("Completed");
    const expected = sent.filter((r) => r.run_type === "llm" && (r.tags as string[]).includes("prod"));
    const { rows } = await exportedRows(bucket, done.id, "id");
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(expected.map((r) => r.id)));
    const runs = (await call("GET", `/api/v1/bulk-exports/${done.id}/runs`, { headers: ws.headers })).json;
    const empty = runs.find((r: any) => r.start_time.startsWith("2026-03-04"));
    expect(empty).toMatchObject({
      status: "Completed",
      metadata: { result: { rows_written: 0, exported_files: [] } },
    });
  });

  it("export_fields selects the columns", async () => {
    const bucket = await newBucket(customer);
    const dest = await destination(bucket);
    const fields = ["id", "name", "start_time", "total_tokens", "tags"];
    const done = await finished(
      (await createExport({ bulk_export_destination_id: dest, export_fields: fields })).json.id,
    );
    expect(done.status).toBe("Completed");
    const { rows } = await exportedRows(bucket, done.id);
    const columns = Object.keys(rows[0]).filter(
      (c) => !["year", "month", "day", "export_id", "tenant_id", "session_id"].includes(c),
    );
    expect(columns.sort()).toEqual([...fields].sort());
    const llm = rows.find((r) => r.name === "ChatModel");
    expect(Number(llm?.total_tokens)).toBe(7);
  });

  it("v2_beta: resource=runs, UTC timestamps, list columns, JSON columns", async () => {
    const bucket = await newBucket(customer);
    const dest = await destination(bucket);
    const done = await finished(
      (
        await createExport({
          bulk_export_destination_id: dest,
          format_version: "v2_beta",
          compression: "snappy",
        })
      ).json.id,
    );
    expect(done.status).toBe("Completed");
    const { keys, dir } = await exportedRows(bucket, done.id, "id");
    expect(keys.every((k) => k.includes("/resource=runs/year=2026/"))).toBe(true);
    const types = Object.fromEntries(
      (
        await duck(
          `DESCRIBE SELECT * FROM read_parquet('${dir}/exports/team/export_id=${done.id}/**/*.parquet')`,
        )
      ).map((r) => [r.column_name, r.column_type]),
    );
    expect(types.tags).toBe("VARCHAR[]");
    expect(types.parent_run_ids).toBe("VARCHAR[]");
    expect(types.start_time).toBe("TIMESTAMP WITH TIME ZONE");
    expect(types.inputs).toBe("JSON");
    const rows = await duck(
      `SELECT id, tags, epoch_ms(start_time) AS ms FROM read_parquet('${dir}/exports/team/export_id=${done.id}/**/*.parquet')`,
    );
    expect(rows).toHaveLength(sent.length);
    const byId = new Map(sent.map((r) => [r.id, r]));
    for (const r of rows) {
      expect(r.tags).toEqual(byId.get(r.id)!.tags);
      expect(Number(r.ms)).toBe(Date.parse(byId.get(r.id)!.start_time as string));
    }
  });

  it("an injected S3 failure is retried and recorded as retry_0; the export completes with every row once", async () => {
    const proxy = await s3Proxy(customer.s3.endpoint);
    try {
      const bucket = await newBucket(customer);
      const dest = await destination(bucket, {}, proxy.endpoint);
      proxy.failNext(1);
      const done = await finished((await createExport({ bulk_export_destination_id: dest })).json.id);
      expect(done.status).toBe("Completed");
      expect(proxy.failed).toBe(1);
      const runs = (await call("GET", `/api/v1/bulk-exports/${done.id}/runs`, { headers: ws.headers })).json;
      const retried = runs.filter((r: any) => r.retry_number > 0);
      expect(retried).toHaveLength(1);
      expect(Object.keys(retried[0].errors)).toEqual(["retry_0"]);
      expect(retried[0].errors.retry_0).toMatch(/injected failure|InternalError/);
      const { rows } = await exportedRows(bucket, done.id, "id");
      expect(rows).toHaveLength(sent.length);
      expect(new Set(rows.map((r) => r.id)).size).toBe(sent.length);
    } finally {
      await proxy.close();
    }
  });

  it("a destination whose bucket disappears fails the export without retries", async () => {
    const bucket = await newBucket(customer);
    const dest = await destination(bucket);
    await s3For(customer).send(new DeleteBucketCommand({ Bucket: bucket }));
    const done = await finished((await createExport({ bulk_export_destination_id: dest })).json.id);
    expect(done.status).toBe("Failed");
    const runs = (await call("GET", `/api/v1/bulk-exports/${done.id}/runs`, { headers: ws.headers })).json;
    const failed = runs.filter((r: any) => r.status === "Failed");
    expect(failed.length).toBeGreaterThanOrEqual(1);
    for (const r of failed) {
      expect(r.retry_number).toBe(0);
      expect(Object.keys(r.errors)).toEqual(["retry_0"]);
      expect(r.errors.retry_0).toMatch(/^DestinationError: Access denied or bucket is not valid: /);
      expect(r.errors.retry_0).not.toMatch(/NoSuchBucket|does not exist/);
    }
  });

  it("cancel stops the export and its unfinished runs; a cancelled export stays cancelled", async () => {
    const proxy = await s3Proxy(customer.s3.endpoint);
    proxy.delayMs = 1500;
    try {
      const bucket = await newBucket(customer);
      const dest = await destination(bucket, {}, proxy.endpoint);
      const created = await createExport({ bulk_export_destination_id: dest });
      await waitFor("the export to run", async () => {
        const r = await call("GET", `/api/v1/bulk-exports/${created.json.id}`, { headers: ws.headers });
        return r.json.status === "Running";
      });
      const cancelled = await call("PATCH", `/api/v1/bulk-exports/${created.json.id}`, {
        headers: ws.headers,
        body: { status: "cancelled" },
      });
      expect(cancelled.status).toBe(200);
      expect(cancelled.json.status).toBe("Cancelled");
      await new Promise((r) => setTimeout(r, 2500));
      const after = await call("GET", `/api/v1/bulk-exports/${created.json.id}`, { headers: ws.headers });
      expect(after.json.status).toBe("Cancelled");
      const runs = (
        await call("GET", `/api/v1/bulk-exports/${created.json.id}/runs`, { headers: ws.headers })
      ).json;
      expect(runs.every((r: any) => ["Cancelled", "Completed"].includes(r.status))).toBe(true);
      expect(runs.some((r: any) => r.status === "Cancelled")).toBe(true);
      const again = await call("PATCH", `/api/v1/bulk-exports/${created.json.id}`, {
        headers: ws.headers,
        body: { status: "Cancelled" },
      });
      expect(again.status).toBe(200);
      expect(again.json.status).toBe("Cancelled");
    } finally {
      await proxy.close();
    }
  });

  it("exports over the workspace limit wait in Created and run when capacity frees", async () => {
    const other = await newWorkspace();
    const name = `queue-${crypto.randomUUID().slice(0, 6)}`;
    await call("POST", "/api/v1/runs/batch", {
      headers: other.headers,
      body: { post: runsOverDays(name, DAYS[0], 1, 5) },
    });
    const pid = (await call("GET", `/api/v1/sessions?name=${name}`, { headers: other.headers })).json[0].id;
    const proxy = await s3Proxy(customer.s3.endpoint);
    // Each S3 call of the exports takes 3 s: the first ones still run when the queue is read, on a loaded machine too.
    proxy.delayMs = 3000;
    try {
      const bucket = await newBucket(customer);
      const saved = ws;
      ws = other;
      const dest = await destination(bucket, {}, proxy.endpoint);
      ws = saved;
      const limit = Number(process.env.EXPORT_MAX_RUNNING_PER_WORKSPACE ?? 15);
      const ids: string[] = [];
      for (let i = 0; i < limit + 1; i++) {
        const r = await call("POST", "/api/v1/bulk-exports", {
          headers: other.headers,
          body: {
            bulk_export_destination_id: dest,
            session_id: pid,
            start_time: `${DAYS[0]}T00:00:00Z`,
            end_time: `${DAYS[1]}T00:00:00Z`,
          },
        });
        expect(r.status).toBe(200);
        ids.push(r.json.id);
      }
      const statusOf = async (id: string) =>
        (await call("GET", `/api/v1/bulk-exports/${id}`, { headers: other.headers })).json.status;
      const statuses = async () => Promise.all(ids.map(statusOf));
      // One read after another, newest first: a status only moves forward and a slot is freed only after its
      // export's final status is written, so this view never counts more running exports than ran at once
      // (reads in parallel can see an older export still running and the newer one that took its slot).
      const early: string[] = [];
      for (const id of [...ids].reverse()) early.unshift(await statusOf(id));
      expect(early.filter((s) => s === "Running").length).toBeLessThanOrEqual(limit);
      expect(early[limit]).toBe("Created");
      await waitFor(
        "every queued export to complete",
        async () => (await statuses()).every((s) => s === "Completed"),
        60_000,
      );
    } finally {
      await proxy.close();
    }
  });

  it("a scheduled export spawns its due windows in order, each with source_bulk_export_id; cancelling it stops the schedule only", async () => {
    const bucket = await newBucket(customer);
    const dest = await destination(bucket);
    const start = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 49 * 3_600_000).toISOString();
    const created = await call("POST", "/api/v1/bulk-exports", {
      headers: ws.headers,
      body: { bulk_export_destination_id: dest, session_id: project, start_time: start, interval_hours: 24 },
    });
    expect(created.status, created.text).toBe(200);
    expect(created.json.status).toBe("IntervalScheduled");
    expect(created.json.end_time).toBeNull();
    const children = await waitFor("two spawned exports", async () => {
      const all = (await call("GET", "/api/v1/bulk-exports?limit=1000", { headers: ws.headers })).json;
      const mine = all.filter((e: any) => e.source_bulk_export_id === created.json.id);
      return mine.length >= 2 ? mine : undefined;
    });
    // A window is a one-off export: no interval_hours of its own.
    for (const c of children) expect(c.interval_hours).toBeNull();
    const windows = children.map((c: any) => [c.start_time, c.end_time]).sort();
    expect(Date.parse(windows[0][0])).toBe(Date.parse(start));
    expect(Date.parse(windows[0][1])).toBe(Date.parse(start) + 24 * 3_600_000);
    expect(windows[1][0]).toBe(windows[0][1]);
    for (const c of children) await finished(c.id);
    const runs = await call("GET", `/api/v1/bulk-exports/runs?source_bulk_export_id=${created.json.id}`, {
      headers: ws.headers,
    });
    expect(runs.status).toBe(200);
    expect(runs.json.length).toBeGreaterThanOrEqual(2);
    const cancel = await call("PATCH", `/api/v1/bulk-exports/${created.json.id}`, {
      headers: ws.headers,
      body: { status: "Cancelled" },
    });
    expect(cancel.json.status).toBe("Cancelled");
    for (const c of children)
      expect((await call("GET", `/api/v1/bulk-exports/${c.id}`, { headers: ws.headers })).json.status).toBe(
        "Completed",
      );
  });
});

describe("listing bulk exports", () => {
  it("pages with limit and offset and says when more exist; status takes any case", async () => {
    const list = (q: string) => call("GET", `/api/v1/bulk-exports?${q}`, { headers: ws.headers });
    const all = (await list("limit=1000")).json as { id: string; status: string }[];
    expect(all.length).toBeGreaterThan(2);
    const first = await list("limit=2");
    expect(first.json.map((e: { id: string }) => e.id)).toEqual(all.slice(0, 2).map((e) => e.id));
    expect(first.headers.get("x-pagination-next")).toBe("2");
    const second = await list("limit=2&offset=2");
    expect(second.json.map((e: { id: string }) => e.id)).toEqual(all.slice(2, 4).map((e) => e.id));
    const last = await list(`limit=10&offset=${all.length - 1}`);
    expect(last.json).toHaveLength(1);
    expect(last.headers.get("x-pagination-next")).toBeNull();
    const completed = await list("status=completed&limit=1000");
    expect(completed.status).toBe(200);
    expect(completed.json.length).toBe(all.filter((e) => e.status === "Completed").length);
    expect((await list("status=done")).status).toBe(422);
  });
});

describe("bulk export validation", () => {
  let dest: string;
  beforeAll(async () => {
    dest = await destination(await newBucket(customer));
  });
  const cases: [string, Record<string, unknown>, string][] = [
    ["end_time missing without interval_hours", { end_time: undefined }, "end_time"],
    ["end_time with interval_hours", { interval_hours: 2 }, "end_time"],
    ["interval_hours 0", { end_time: undefined, interval_hours: 0 }, "interval_hours"],
    ["interval_hours 169", { end_time: undefined, interval_hours: 169 }, "interval_hours"],
    ["an unknown export field", { export_fields: ["id", "secret_sauce"] }, "export_fields"],
    ["a bad filter", { filter: 'eq(name, "x"' }, "filter"],
    [
      "an unknown destination",
      { bulk_export_destination_id: crypto.randomUUID() },
      "bulk_export_destination_id",
    ],
    ["an unknown project", { session_id: crypto.randomUUID() }, "session_id"],
    ["a bad format_version", { format_version: "v3" }, "format_version"],
    ["a bad compression", { compression: "lz4" }, "compression"],
  ];
  for (const [what, over, field] of cases)
    it(`422 for ${what}`, async () => {
      const r = await createExport({ bulk_export_destination_id: dest, ...over });
      expect(r.status, r.text).toBe(422);
      expect(r.json.detail.map((d: any) => d.loc[1])).toContain(field);
    });

  it("422 for a repeated export field, at its index, saying which", async () => {
    const r = await createExport({ bulk_export_destination_id: dest, export_fields: ["id", "name", "id"] });
    expect(r.status, r.text).toBe(422);
    expect(r.json.detail).toHaveLength(1);
    expect(r.json.detail[0].loc).toEqual(["body", "export_fields", 2]);
    expect(r.json.detail[0].msg).toMatch(/\bid is repeated/);
  });

  it("422 for a day range whose plan would not fit the workflow's state, naming the maximum", async () => {
    const r = await createExport({
      bulk_export_destination_id: dest,
      start_time: "2000-01-01T00:00:00Z",
      end_time: "2026-01-01T00:00:00Z",
    });
    expect(r.status, r.text).toBe(422);
    expect(r.json.detail[0].loc).toEqual(["body", "end_time"]);
    expect(r.json.detail[0].msg).toMatch(/at most \d+ UTC days/);
  });

  it("the filter's 422 points at the character", async () => {
    const r = await createExport({
      bulk_export_destination_id: dest,
      filter: "and(eq(name, 'x'), bogus(1))",
    });
    expect(r.json.detail[0].msg).toMatch(/position \d+/);
  });

  it("another workspace's export, destination or project is a 404/422", async () => {
    const created = await createExport({
      bulk_export_destination_id: dest,
      start_time: "2020-01-01T00:00:00Z",
      end_time: "2020-01-02T00:00:00Z",
    });
    const other = await newWorkspace();
    expect(
      (await call("GET", `/api/v1/bulk-exports/${created.json.id}`, { headers: other.headers })).status,
    ).toBe(404);
    expect(
      (await call("GET", `/api/v1/bulk-exports/${created.json.id}/runs`, { headers: other.headers })).status,
    ).toBe(404);
    const r = await createExport({ bulk_export_destination_id: dest }, other.headers);
    expect(r.status).toBe(422);
    expect(r.json.detail.map((d: any) => d.loc[1]).sort()).toEqual([
      "bulk_export_destination_id",
      "session_id",
    ]);
  });

  it("PATCH accepts only Cancelled; a finished export cannot be cancelled", async () => {
    const created = await createExport({
      bulk_export_destination_id: dest,
      start_time: "2020-01-01T00:00:00Z",
      end_time: "2020-01-02T00:00:00Z",
    });
    const bad = await call("PATCH", `/api/v1/bulk-exports/${created.json.id}`, {
      headers: ws.headers,
      body: { status: "Running" },
    });
    expect(bad.status).toBe(422);
    const done = await finished(created.json.id);
    expect(done.status).toBe("Completed");
    const late = await call("PATCH", `/api/v1/bulk-exports/${created.json.id}`, {
      headers: ws.headers,
      body: { status: "Cancelled" },
    });
    expect(late.status).toBe(422);
  });
});
