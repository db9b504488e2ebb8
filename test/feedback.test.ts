import { rmSync } from "node:fs";
import { UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { Client, RunTree } from "langsmith";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { download, duck, newBucket, newWorkspace, s3For, waitFor } from "../harness/export.ts";
import { dynamo } from "../shared/aws/clients.ts";
import { getItem, toItem } from "../shared/aws/ddb.ts";
import { type TraceRunRecord, traceRunKeys } from "../shared/records/runs.ts";
import { tableName } from "../shared/tables.ts";
import { call, customer, facts } from "./helpers/cloud.ts";

// Feedback and retention tiers with the real langsmith SDK: createFeedback (batched into /runs/multipart as
// `feedback.<id>` parts when it names the trace, else POST /feedback), listFeedback, updateFeedback,
// readFeedback, deleteFeedback; runs carry feedback_stats and trace_tier in GET /runs/{id}, the run query and
// the Parquet export (read with DuckDB). A trace given feedback moves to the long-lived tier.
let ws: Awaited<ReturnType<typeof newWorkspace>>;
let client: Client;
const dirs: string[] = [];
const DAY = 86_400;

const api = (method: string, path: string, body?: unknown, headers = ws.headers) =>
  call(method, path, { headers, body });
const getRun = async (id: string) => (await api("GET", `/api/v1/runs/${id}`)).json;

async function project(name: string, tier?: string): Promise<string> {
  const r = await api("POST", "/api/v1/sessions", { name, ...(tier ? { trace_tier: tier } : {}) });
  expect(r.status, r.text).toBe(200);
  expect(r.json.trace_tier).toBe(tier ?? "longlived");
  return r.json.id;
}

/** A root chain with one llm child, traced by the SDK into the project; waits until both are stored. */
async function trace(projectName: string) {
  const root = new RunTree({
    name: "Agent",
    run_type: "chain",
    inputs: { q: "hi" },
    project_name: projectName,
    client,
    tracingEnabled: true,
  });
  await root.postRun();
  const child = root.createChild({ name: "Model", run_type: "llm", inputs: { messages: [] } });
  await child.postRun();
  await child.end({ generations: [] });
  await child.patchRun();
  await root.end({ answer: "hello" });
  await root.patchRun();
  await client.awaitPendingTraceBatches();
  await expect.poll(async () => (await getRun(child.id))?.status, { timeout: 15_000 }).toBe("success");
  await expect.poll(async () => (await getRun(root.id))?.status, { timeout: 15_000 }).toBe("success");
  return { root: root.id, child: child.id };
}

const stored = (id: string) => getItem<TraceRunRecord>("runs", traceRunKeys.run(ws.tenant, id), true);

beforeAll(async () => {
  ws = await newWorkspace();
  client = new Client({
    apiUrl: `${facts.base_url}/api/v1`,
    apiKey: ws.headers["X-Api-Key"],
    workspaceId: ws.tenant,
    autoBatchTracing: true,
  });
});

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("feedback with the langsmith SDK", () => {
  let projectId: string;
  let ids: { root: string; child: string };
  const name = `fb-${crypto.randomUUID().slice(0, 8)}`;

  it("a short-lived project's runs are short-lived: tier on the run, expiry 14 days after ingestion", async () => {
    projectId = await project(name, "shortlived");
    const before = Math.floor(Date.now() / 1000);
    ids = await trace(name);
    const child = await getRun(ids.child);
    expect(child.trace_tier).toBe("shortlived");
    expect(child.feedback_stats).toBeNull();
    const item = await stored(ids.child);
    expect(item?.expires_at).toBeGreaterThanOrEqual(before + 14 * DAY - 5);
    expect(item?.expires_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 14 * DAY + 5);
  });

  it("createFeedback (multipart part and direct POST) → feedback_stats per key; the trace becomes long-lived", async () => {
    // With the trace id the SDK batches the feedback into /runs/multipart; without it, it POSTs /feedback.
    const viaMultipart = await client.createFeedback(ids.child, "correctness", {
      score: 1,
      traceId: ids.root,
      sessionId: projectId,
    });
    const direct = await client.createFeedback(ids.child, "correctness", {
      score: 0,
      value: "wrong",
      comment: "off by one",
      sessionId: projectId,
    });
    await client.createFeedback(ids.child, "helpful", { score: true, sessionId: projectId });
    await client.awaitPendingTraceBatches();
    await expect
      .poll(async () => (await getRun(ids.child)).feedback_stats, { timeout: 15_000 })
      .toEqual({
        correctness: { n: 2, avg: 0.5, values: { wrong: 1 } },
        helpful: { n: 1, avg: 1, values: {} },
      });
    const child = await getRun(ids.child);
    const root = await getRun(ids.root);
    expect(child.trace_tier).toBe("longlived");
    expect(root.trace_tier).toBe("longlived");
    expect(root.feedback_stats).toBeNull();
    expect((await stored(ids.root))?.expires_at).toBeGreaterThan(Math.floor(Date.now() / 1000) + 399 * DAY);

    const read = await client.readFeedback(direct.id);
    expect(read).toMatchObject({
      id: direct.id,
      run_id: ids.child,
      trace_id: ids.root,
      session_id: projectId,
      key: "correctness",
      score: 0,
      value: "wrong",
      comment: "off by one",
      feedback_source: { type: "api" },
    });
    expect((await client.readFeedback(viaMultipart.id)).score).toBe(1);
  });

  it("listFeedback by run and key; the run query carries feedback_stats", async () => {
    const all = [];
    for await (const f of client.listFeedback({ runIds: [ids.child] })) all.push(f);
    expect(all.map((f) => f.key).sort()).toEqual(["correctness", "correctness", "helpful"]);
    const correctness = [];
    for await (const f of client.listFeedback({ runIds: [ids.child], feedbackKeys: ["correctness"] }))
      correctness.push(f);
    expect(correctness).toHaveLength(2);
    const workspace = [];
    for await (const f of client.listFeedback({ feedbackKeys: ["helpful"] })) workspace.push(f);
    expect(workspace).toHaveLength(1);
    const none = [];
    for await (const f of client.listFeedback({ runIds: [ids.root] })) none.push(f);
    expect(none).toHaveLength(0);

    const q = await api("POST", "/api/v1/runs/query", {
      session: [projectId],
      filter: 'eq(run_type, "llm")',
    });
    expect(q.status, q.text).toBe(200);
    expect(q.json.runs).toHaveLength(1);
    expect(q.json.runs[0]).toMatchObject({
      id: ids.child,
      trace_tier: "longlived",
      feedback_stats: { correctness: { n: 2, avg: 0.5 } },
    });
  });

  it("updateFeedback and deleteFeedback change the run's feedback_stats", async () => {
    const list = [];
    for await (const f of client.listFeedback({ runIds: [ids.child], feedbackKeys: ["correctness"] }))
      list.push(f);
    const zero = list.find((f) => f.score === 0)!;
    await client.updateFeedback(zero.id, { score: 1, value: "right" });
    expect(await client.readFeedback(zero.id)).toMatchObject({
      score: 1,
      value: "right",
      comment: "off by one",
    });
    expect((await getRun(ids.child)).feedback_stats.correctness).toEqual({
      n: 2,
      avg: 1,
      values: { right: 1 },
    });
    await client.deleteFeedback(zero.id);
    expect((await api("GET", `/api/v1/feedback/${zero.id}`)).status).toBe(404);
    expect((await getRun(ids.child)).feedback_stats.correctness).toEqual({ n: 1, avg: 1, values: {} });
  });

  it("the export's Parquet files carry feedback_stats and trace_tier (DuckDB)", async () => {
    const bucket = await newBucket(customer);
    const dest = await api("POST", "/api/v1/bulk-exports/destinations", {
      destination_type: "s3",
      display_name: bucket,
      config: { bucket_name: bucket, prefix: "fb", endpoint_url: customer.s3.endpoint },
      credentials: {
        access_key_id: customer.s3.access_key_id,
        secret_access_key: customer.s3.secret_access_key,
      },
    });
    expect(dest.status, dest.text).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    const created = await api("POST", "/api/v1/bulk-exports", {
      bulk_export_destination_id: dest.json.id,
      session_id: projectId,
      start_time: `${today}T00:00:00Z`,
      end_time: new Date(Date.parse(`${today}T00:00:00Z`) + DAY * 1000).toISOString(),
    });
    expect(created.status, created.text).toBe(200);
    const done = await waitFor("export to finish", async () => {
      const r = await api("GET", `/api/v1/bulk-exports/${created.json.id}`);
      return ["Completed", "Failed", "Cancelled", "TimedOut"].includes(r.json.status) ? r.json : undefined;
    });
    expect(done.status).toBe("Completed");
    const { dir } = await download(s3For(customer), bucket, "fb/");
    dirs.push(dir);
    const rows = await duck(
      `SELECT id, trace_tier, feedback_stats FROM read_parquet('${dir}/fb/**/*.parquet') ORDER BY id`,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(ids.child)?.trace_tier).toBe("longlived");
    expect(JSON.parse(byId.get(ids.child)?.feedback_stats)).toEqual({
      correctness: { n: 1, avg: 1, values: {} },
      helpful: { n: 1, avg: 1, values: {} },
    });
    expect(byId.get(ids.root)?.trace_tier).toBe("longlived");
    expect(byId.get(ids.root)?.feedback_stats).toBeNull();
  });
});

describe("feedback: order, retention choices and refusals", () => {
  it("feedback that arrives before its run is kept: the run gets its stats and tier when posted", async () => {
    const name = `fb-early-${crypto.randomUUID().slice(0, 8)}`;
    await project(name, "shortlived");
    const runId = crypto.randomUUID();
    const early = await api("POST", "/api/v1/feedback", { run_id: runId, key: "early", score: 0.25 });
    expect(early.status, early.text).toBe(200);
    const post = await api("POST", "/api/v1/runs", {
      id: runId,
      name: "late",
      run_type: "chain",
      session_name: name,
      inputs: {},
      start_time: new Date().toISOString(),
    });
    expect(post.status, post.text).toBe(202);
    const run = await getRun(runId);
    expect(run.feedback_stats).toEqual({ early: { n: 1, avg: 0.25, values: {} } });
    expect(run.trace_tier).toBe("longlived");
    // Posted again (an SDK retry): nothing of it is lost.
    await api("POST", "/api/v1/runs", {
      id: runId,
      name: "late",
      run_type: "chain",
      session_name: name,
      inputs: {},
    });
    expect((await getRun(runId)).feedback_stats).toEqual({ early: { n: 1, avg: 0.25, values: {} } });
    expect((await getRun(runId)).trace_tier).toBe("longlived");
  });

  it("extend_trace_retention: false leaves the trace short-lived; a long-lived project's runs are long-lived", async () => {
    const name = `fb-keep-${crypto.randomUUID().slice(0, 8)}`;
    await project(name, "shortlived");
    const runId = crypto.randomUUID();
    await api("POST", "/api/v1/runs", {
      id: runId,
      name: "r",
      run_type: "tool",
      session_name: name,
      inputs: {},
    });
    const f = await api("POST", "/api/v1/feedback", {
      run_id: runId,
      key: "note",
      value: "fyi",
      extend_trace_retention: false,
    });
    expect(f.status, f.text).toBe(200);
    const run = await getRun(runId);
    expect(run.trace_tier).toBe("shortlived");
    expect(run.feedback_stats).toEqual({ note: { n: 1, avg: null, values: { fyi: 1 } } });

    const longName = `fb-long-${crypto.randomUUID().slice(0, 8)}`;
    const longId = await project(longName);
    const longRun = crypto.randomUUID();
    await api("POST", "/api/v1/runs", {
      id: longRun,
      name: "r",
      run_type: "tool",
      session_id: longId,
      inputs: {},
    });
    expect((await getRun(longRun)).trace_tier).toBe("longlived");
    // A project's tier can change: runs ingested after it take the new one.
    const patched = await api("PATCH", `/api/v1/sessions/${longId}`, { trace_tier: "shortlived" });
    expect(patched.json.trace_tier).toBe("shortlived");
  });

  it("a run past its retention is gone for readers before DynamoDB TTL deletes it", async () => {
    const name = `fb-old-${crypto.randomUUID().slice(0, 8)}`;
    const projectId = await project(name, "shortlived");
    const [old, fresh] = [crypto.randomUUID(), crypto.randomUUID()];
    for (const id of [old, fresh])
      await api("POST", "/api/v1/runs", {
        id,
        name: "r",
        run_type: "tool",
        session_id: projectId,
        inputs: {},
      });
    // Fifteen days pass for one run: its expiry is moved into the past (the platform never does this itself).
    await dynamo().send(
      new UpdateItemCommand({
        TableName: tableName("runs"),
        Key: toItem(traceRunKeys.run(ws.tenant, old)),
        UpdateExpression: "SET expires_at = :e",
        ExpressionAttributeValues: toItem({ ":e": Math.floor(Date.now() / 1000) - DAY }),
      }),
    );
    expect((await api("GET", `/api/v1/runs/${old}`)).status).toBe(404);
    expect((await api("GET", `/api/v1/runs/${fresh}`)).status).toBe(200);
    const q = await api("POST", "/api/v1/runs/query", { session: [projectId] });
    expect(q.json.runs.map((r: { id: string }) => r.id)).toEqual([fresh]);
    const byId = await api("POST", "/api/v1/runs/query", { id: [old, fresh] });
    expect(byId.json.runs.map((r: { id: string }) => r.id)).toEqual([fresh]);
  });

  it("refuses what it does not do, with a 422 that says why; another workspace sees nothing", async () => {
    const runId = crypto.randomUUID();
    const refusals: [Record<string, unknown>, RegExp][] = [
      [{ key: "k", score: 1 }, /run_id/],
      [
        { run_id: runId, key: "k", comparative_experiment_id: crypto.randomUUID() },
        /comparative experiments/,
      ],
      [
        { run_id: runId, key: "k", score: 7, feedback_config: { type: "continuous", min: 0, max: 1 } },
        /max 1/,
      ],
      [
        {
          run_id: runId,
          key: "k",
          score: 3,
          feedback_config: { type: "categorical", categories: [{ value: 0 }, { value: 1 }] },
        },
        /categories/,
      ],
      [{ run_id: runId, key: "" }, /key/],
      [{ run_id: runId, key: "k", score: "high" }, /score/],
    ];
    for (const [body, why] of refusals) {
      const r = await api("POST", "/api/v1/feedback", body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(JSON.stringify(r.json.detail)).toMatch(why);
    }
    expect((await api("GET", "/api/v1/feedback?session=x")).status).toBe(422);

    const mine = await api("POST", "/api/v1/feedback", { run_id: runId, key: "mine", score: 1 });
    expect(mine.status).toBe(200);
    const other = await newWorkspace();
    expect((await api("GET", `/api/v1/feedback/${mine.json.id}`, undefined, other.headers)).status).toBe(404);
    expect((await api("DELETE", `/api/v1/feedback/${mine.json.id}`, undefined, other.headers)).status).toBe(
      404,
    );
    expect((await api("PATCH", `/api/v1/feedback/${mine.json.id}`, { score: 0 }, other.headers)).status).toBe(
      404,
    );
    const theirs = await api("GET", `/api/v1/feedback?run=${runId}`, undefined, other.headers);
    expect(theirs.json).toEqual([]);
    // The same id again on another run is a conflict, not a move.
    const moved = await api("POST", "/api/v1/feedback", {
      id: mine.json.id,
      run_id: crypto.randomUUID(),
      key: "x",
    });
    expect(moved.status).toBe(409);
    // The same id again on the same run (a retry) replaces it.
    const again = await api("POST", "/api/v1/feedback", {
      id: mine.json.id,
      run_id: runId,
      key: "mine",
      score: 1,
    });
    expect(again.status).toBe(200);
    const listed = await api("GET", `/api/v1/feedback?run=${runId}`);
    expect(listed.json).toHaveLength(1);
  });
});
