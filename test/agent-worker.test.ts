import { readFileSync, rmSync } from "node:fs";
import { type IncomingHttpHeaders, type RequestOptions, request } from "node:http";
import { join } from "node:path";
import { DynamoDBClient, QueryCommand } from "@aws-sdk/client-dynamodb";
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { agentClient, collect, deployedClient, runStatusSoon } from "../harness/agents.ts";
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
import { gitRepo, graphRepoFiles } from "../harness/repos.ts";
import { agentKeys } from "../shared/records/agent.ts";
import { sharedDynamoDb } from "./helpers/shared-dynamodb.ts";

// Issue 6, execution as in AWS: with AGENT_RUN_WORKER=lambda the API only records runs and invokes the
// AgentRunWorker function asynchronously (the local Lambda service); streams and waits read the durable
// records, cancellation reaches the worker through the run's record. And a platform killed mid-run leaves
// the run retryable: after the restart the sweeper puts it back to pending with attempt 2, and it resumes
// from its last checkpoint (its first node does not run twice); the same crash ends an export and a revision in
// flight as if nothing had happened (the last describe).
const GRAPH = `
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const State = Annotation.Root({ items: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }) });
export const quick = new StateGraph(State)
  .addNode("work", async (_s, config) => { config.writer?.({ progress: "half" }); return { items: ["work"] }; })
  .addNode("done", async () => ({ items: ["done"] }))
  .addEdge(START, "work").addEdge("work", "done").addEdge("done", END).compile();
export const long = new StateGraph(State)
  .addNode("a", async () => { await sleep(200); return { items: ["a"] }; })
  .addNode("b", async () => { await sleep(4000); return { items: ["b"] }; })
  .addEdge(START, "a").addEdge("a", "b").addEdge("b", END).compile();
// As long, with a b of 10 s: the window in which the crash test kills the platform, on a busy machine.
export const longer = new StateGraph(State)
  .addNode("a", async () => { await sleep(200); return { items: ["a"] }; })
  .addNode("b", async () => { await sleep(10000); return { items: ["b"] }; })
  .addEdge(START, "a").addEdge("a", "b").addEdge("b", END).compile();
// Its first pass through "stall" freezes the whole runtime process for 5 s (no lease renewal, no timers).
let stalls = 0;
const freeze = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
export const stall = new StateGraph(State)
  .addNode("first", async () => ({ items: ["first"] }))
  .addNode("stall", async () => { if (stalls++ === 0) freeze(5000); return { items: ["stall"] }; })
  .addNode("last", async () => ({ items: ["last"] }))
  .addEdge(START, "first").addEdge("first", "stall").addEdge("stall", "last").addEdge("last", END).compile();
`;
const FILES = {
  "langgraph.json": JSON.stringify({
    graphs: {
      quick: "./src/graph.mjs:quick",
      long: "./src/graph.mjs:long",
      longer: "./src/graph.mjs:longer",
      stall: "./src/graph.mjs:stall",
    },
    env: {},
  }),
  "src/graph.mjs": GRAPH,
};
// PLATFORM_COUNT_REQUESTS: the platform describes each runtime (socket, token) in DATA_DIR/runtime/, which a test
// below reads to call a runtime as the platform's router does. The EXPORT_ settings make the export killed at the end
// (one run at a time, a file per page of 25) write many small files.
const ENV = {
  LOG_LEVEL: "error",
  AGENT_RUN_WORKER: "lambda",
  AGENT_RUN_LEASE_MS: "2000",
  PLATFORM_COUNT_REQUESTS: "1",
  EXPORT_PAGE_SIZE: "25",
  EXPORT_FILE_BYTES: "1",
  EXPORT_MAX_CONCURRENT_RUNS: "1",
  LOCAL_SFN_RETRY_INTERVAL_MS: "100",
};

let platform: RunningPlatform;
let client: Client;
let deploymentId: string;
const repo = gitRepo(FILES);

/** The platform's tables in the test run's DynamoDB, under a prefix of their own. */
const TABLES = `w${crypto.randomUUID().slice(0, 8)}-`;

beforeAll(async () => {
  platform = await startPlatform(ENV, { sharedDynamoDb: { ...sharedDynamoDb(), tablePrefix: TABLES } });
  ({ deploymentId, client } = await deployedClient(platform.facts, repo.dir, "worker"));
}, 180_000);

afterAll(async () => {
  await platform?.stop();
  repo.remove();
});

/** The run once it ended (success, error or interrupted), within a minute. */
const runEnd = (c: Client, threadId: string, runId: string) =>
  waitFor(
    "the run to end",
    async () => {
      const r = await c.runs.get(threadId, runId);
      return ["success", "error", "interrupted"].includes(r.status) ? r : undefined;
    },
    // A restart of the whole platform (DynamoDB Local, the runtime) can take a while on a busy 2-core machine.
    120_000,
    100,
  );

const whenRunning = (c: Client, threadId: string, runId: string) =>
  runStatusSoon(c, threadId, runId, "running", 20_000);

describe("runs executed by the worker function", () => {
  it("runs.wait answers the final values the worker left on the run", async () => {
    const t = await client.threads.create();
    const values = await client.runs.wait(t.thread_id, "quick", { input: { items: ["in"] } });
    expect(values).toEqual({ items: ["in", "work", "done"] });
    const [run] = await client.runs.list(t.thread_id);
    expect(run.status).toBe("success");
    expect((await client.threads.get(t.thread_id)).status).toBe("idle");
  });

  it("runs.stream tails the run's durable event log: values, updates and custom frames in order", async () => {
    const t = await client.threads.create();
    const parts = await collect(
      client.runs.stream(t.thread_id, "quick", {
        input: { items: ["in"] },
        streamMode: ["values", "updates", "custom"],
      }),
    );
    expect(parts[0].event).toBe("metadata");
    expect(parts.filter((p) => p.event === "updates").map((p) => Object.keys(p.data)[0])).toEqual([
      "work",
      "done",
    ]);
    expect(parts.find((p) => p.event === "custom")?.data).toEqual({ progress: "half" });
    expect(parts.filter((p) => p.event === "values").at(-1)?.data).toEqual({ items: ["in", "work", "done"] });
  });

  it("a non-resumable run still streams to its client through the log, which is dropped once it ended", async () => {
    const t = await client.threads.create();
    const parts = await collect(
      client.runs.stream(t.thread_id, "quick", {
        input: { items: ["in"] },
        streamMode: ["values", "updates"],
        streamResumable: false,
      }),
    );
    expect(parts.map((p) => p.event)).toEqual([
      "metadata",
      "values",
      "updates",
      "values",
      "updates",
      "values",
    ]);
    expect(parts.at(-1)?.data).toEqual({ items: ["in", "work", "done"] });
    const runId = parts[0].data.run_id as string;
    // Its tables, through its own AWS endpoint with its operator's keys.
    const ddb = new DynamoDBClient({
      endpoint: platform.facts.dynamodb_endpoint,
      region: "us-east-1",
      credentials: {
        accessKeyId: platform.facts.s3.access_key_id,
        secretAccessKey: platform.facts.s3.secret_access_key,
      },
    });
    const logged = async (run: string) =>
      (
        await ddb.send(
          new QueryCommand({
            TableName: `${TABLES}main`,
            KeyConditionExpression: "PK = :pk",
            ExpressionAttributeValues: {
              ":pk": { S: agentKeys.eventsPk(`${platform.facts.tenant_id}#${deploymentId}`, run) },
            },
            ConsistentRead: true,
          }),
        )
      ).Count ?? 0;
    // The same look finds a resumable run's frames: the non-resumable run's are gone, not looked for elsewhere.
    const kept = await collect(client.runs.stream(t.thread_id, "quick", { input: { items: ["k"] } }));
    expect(await logged(kept[0].data.run_id)).toBeGreaterThan(0);
    await waitFor("the run's event log to be dropped", async () => (await logged(runId)) === 0, 15_000, 200);
    expect(await collect(client.runs.joinStream(t.thread_id, runId, { lastEventId: "-1" }))).toEqual([]);
  });

  it("a stateless run waits in the worker and its temporary thread is deleted after", async () => {
    const values = await client.runs.wait(null, "quick", { input: { items: ["s"] } });
    expect(values).toEqual({ items: ["s", "work", "done"] });
  });

  it("an interrupt reaches the running worker through the run record, long before its node would end", async () => {
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "long", { input: { items: ["in"] } });
    await whenRunning(client, t.thread_id, run.run_id);
    const t0 = performance.now();
    await client.runs.cancel(t.thread_id, run.run_id, false, "interrupt");
    await waitFor(
      "the run to stop",
      async () => (await client.runs.get(t.thread_id, run.run_id)).status === "interrupted",
      10_000,
      20,
    );
    const stoppedMs = performance.now() - t0;
    // Node b sleeps 4 s: the run stopped well before it could finish on its own (the worker sees the flag
    // within its 400 ms poll; ~0.8 s from the cancel call to the status seen here), and b wrote nothing.
    expect(stoppedMs).toBeLessThan(2500);
    expect((await client.threads.getState(t.thread_id)).values).not.toHaveProperty(
      "items",
      expect.arrayContaining(["b"]),
    );
    expect((await client.threads.get(t.thread_id)).status).toBe("idle");
  });

  it("rollback: the first run is deleted with its checkpoints, the thread holds only the second run's data", async () => {
    const t = await client.threads.create();
    const first = await client.runs.create(t.thread_id, "long", { input: { items: ["first"] } });
    await whenRunning(client, t.thread_id, first.run_id);
    await waitFor(
      "the first run's checkpoint after node a",
      async () => ((await client.threads.getState(t.thread_id)).values as any).items?.includes("a"),
      10_000,
      20,
    );
    const second = await client.runs.create(t.thread_id, "quick", {
      input: { items: ["second"] },
      multitaskStrategy: "rollback",
    });
    await client.runs.join(t.thread_id, second.run_id);
    await expect(client.runs.get(t.thread_id, first.run_id)).rejects.toThrow(/404/);
    expect((await client.threads.getState(t.thread_id)).values).toEqual({
      items: ["second", "work", "done"],
    });
  });
});

describe("runs the platform starts", () => {
  /** A POST's status, body and 1xx answers (103s carry the drain asks, runtime/drain-asks.ts). */
  const post = (options: RequestOptions, body: unknown) =>
    new Promise<{ status: number; body: string; informational: IncomingHttpHeaders[] }>((done, fail) => {
      const informational: IncomingHttpHeaders[] = [];
      const req = request(
        { ...options, method: "POST", headers: { ...options.headers, "content-type": "application/json" } },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c) => {
            text += c;
          });
          res.on("end", () => done({ status: res.statusCode ?? 0, body: text, informational }));
        },
      );
      req.on("information", (info) => informational.push(info.headers));
      req.on("error", fail);
      req.end(JSON.stringify(body));
    });

  it("a runtime asks the platform to start its run with the answer; the client sees no ask and the run runs", async () => {
    // Straight to the runtime's socket, as the platform's router calls it: the answer asks for the thread's drain.
    const direct = await client.threads.create();
    const rt = JSON.parse(readFileSync(join(platform.dataDir, "runtime", `${deploymentId}.json`), "utf8"));
    const asked = await post(
      {
        socketPath: rt.socket,
        path: `/agents/${deploymentId}/threads/${direct.thread_id}/runs`,
        headers: { "x-runtime-token": rt.token, "x-router-tenant": platform.facts.tenant_id },
      },
      { assistant_id: "quick", input: { items: ["in"] } },
    );
    expect(asked.status).toBe(200);
    expect(asked.informational.map((h) => h["x-agent-drain"])).toEqual([direct.thread_id]);
    // Through the platform's gateway: the platform takes the ask, the client gets the answer only, the run runs.
    const t = await client.threads.create();
    const url = new URL(`${platform.facts.base_url}/agents/${deploymentId}/threads/${t.thread_id}/runs`);
    const created = await post(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        headers: { "x-api-key": platform.facts.api_key, "x-tenant-id": platform.facts.tenant_id },
      },
      { assistant_id: "quick", input: { items: ["in"] } },
    );
    expect(created.status).toBe(200);
    expect(created.informational).toEqual([]);
    const run = JSON.parse(created.body) as { run_id: string };
    expect((await runEnd(client, t.thread_id, run.run_id)).status).toBe("success");
    expect((await client.threads.getState(t.thread_id)).values).toEqual({ items: ["in", "work", "done"] });
  });

  it("a run queued behind a busy thread's run starts when that one ends, in the same drain", async () => {
    const t = await client.threads.create();
    const first = await client.runs.create(t.thread_id, "long", { input: { items: ["1"] } });
    await whenRunning(client, t.thread_id, first.run_id);
    const second = await client.runs.create(t.thread_id, "quick", {
      input: { items: ["2"] },
      multitaskStrategy: "enqueue",
    });
    expect((await client.runs.get(t.thread_id, second.run_id)).status).toBe("pending");
    expect((await runEnd(client, t.thread_id, second.run_id)).status).toBe("success");
    expect((await client.runs.get(t.thread_id, first.run_id)).status).toBe("success");
    expect((await client.threads.getState(t.thread_id)).values).toEqual({
      items: ["1", "a", "b", "2", "work", "done"],
    });
  });

  it("a delayed run starts once it is due", async () => {
    const t = await client.threads.create();
    const at = Date.now();
    const run = await client.runs.create(t.thread_id, "quick", { input: { items: ["d"] }, afterSeconds: 2 });
    expect((await client.runs.get(t.thread_id, run.run_id)).status).toBe("pending");
    const done = await runEnd(client, t.thread_id, run.run_id);
    expect(done.status).toBe("success");
    expect(Date.parse(done.updated_at) - at).toBeGreaterThanOrEqual(2000);
  });
});

describe("lease fencing", () => {
  it("a worker paused past its lease can no longer write, finish or release: the retry owns the run", async () => {
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "stall", { input: { items: ["in"] } });
    const done = await runEnd(client, t.thread_id, run.run_id);
    expect(done.status).toBe("success");
    // The paused attempt's "stall" checkpoint was refused (fenced on its attempt): the retry resumed after
    // "first" and its own pass wrote "stall" once.
    expect((await client.threads.getState(t.thread_id)).values).toEqual({
      items: ["in", "first", "stall", "last"],
    });
    expect((await client.threads.get(t.thread_id)).status).toBe("idle");
    const frames = await collect(client.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" }));
    expect(frames.filter((f) => f.event === "metadata").map((f) => f.data.attempt)).toEqual([1, 2]);
  });
});

// The platform killed mid-work (DESIGN.md: local executions die with the process): one kill -9 of its whole process
// group (a machine going down takes builds and runtimes with it) while three pipelines are in flight, then a start
// on the same data. Each pipeline's test asserts its own outcome; one crash and one restart serve the three (a
// platform start is ~10 CPU-seconds).
describe("the platform killed mid-work, then started again on the same data", () => {
  const customer = inject("customerS3");
  const dirs: string[] = [];
  const revisionRepo = gitRepo(graphRepoFiles(["step"]));
  let proxy: Awaited<ReturnType<typeof s3Proxy>>;
  let exportRun: { id: string; sent: Record<string, unknown>[]; bucket: string };
  let revision: { deploymentId: string; path: string };
  let agentRun: { threadId: string; runId: string };

  beforeAll(async () => {
    // An export writing a file per page, each upload slowed: killed after a few files, with more left to write.
    proxy = await s3Proxy(customer.s3.endpoint);
    proxy.delayMs = 250;
    const bucket = `restart-${crypto.randomUUID().slice(0, 8)}`;
    const src = await exportSource(
      platform,
      { project: "restart", firstDay: "2026-04-01", days: 3, perDay: 150, bucket, endpoint: proxy.endpoint },
      customer,
    );
    const created = await src.api("POST", "/api/v1/bulk-exports", {
      bulk_export_destination_id: src.destination,
      session_id: src.project,
      start_time: "2026-04-01T00:00:00Z",
      end_time: "2026-04-04T00:00:00Z",
    });
    expect(created.status).toBe(200);
    exportRun = { id: created.json.id, sent: src.sent, bucket };
    await waitFor("a few files written", async () => {
      const runs = (await src.api("GET", `/api/v1/bulk-exports/${exportRun.id}/runs`)).json as any[];
      const files = runs.reduce((n, r) => n + r.metadata.result.exported_files.length, 0);
      return files >= 3;
    });
    // A revision in its pipeline.
    const api = platformApi(platform);
    const deployment = await api("POST", "/v2/deployments", {
      name: "restart",
      source: "github",
      source_config: { repo_url: revisionRepo.dir, deployment_type: "dev" },
      source_revision_config: { repo_ref: "main" },
    });
    expect(deployment.status).toBe(201);
    revision = {
      deploymentId: deployment.json.id,
      path: `/v2/deployments/${deployment.json.id}/revisions/${deployment.json.latest_revision_id}`,
    };
    const inFlight = async () =>
      ["BUILDING", "AWAITING_DEPLOY", "DEPLOYING"].includes((await api("GET", revision.path)).json.status);
    await waitFor("the build to start", inFlight);
    // An agent run past its first node's checkpoint, in its second (10 s).
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "longer", { input: { items: ["in"] } });
    agentRun = { threadId: t.thread_id, runId: run.run_id };
    await waitFor(
      "node a's checkpoint",
      async () => ((await client.threads.getState(t.thread_id)).values as any).items?.includes("a"),
      20_000,
      20,
    );
    // The export's runs go one at a time: killed while one of them is at work (not between two), it is interrupted.
    const exportRunAtWork = async () =>
      ((await api("GET", `/api/v1/bulk-exports/${exportRun.id}/runs`)).json as any[]).some(
        (r) => r.status === "Running",
      );
    await waitFor("an export run at work", exportRunAtWork, 10_000, 20);
    // All three still in flight when the platform goes down: read at once, since node b ends 10 s after a.
    const [runStatus, building, exporting] = await Promise.all([
      client.runs.get(t.thread_id, run.run_id).then((r) => r.status),
      inFlight(),
      exportRunAtWork(),
    ]);
    expect(runStatus).toBe("running");
    expect(building).toBe(true);
    expect(exporting).toBe(true);
    platform = await platform.crashAndRestart({ wholeGroup: true });
    client = agentClient(platform.facts, deploymentId);
  }, 240_000);

  afterAll(async () => {
    await proxy?.close();
    revisionRepo.remove();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("a worker that died mid-run leaves the run pending with attempt 2; it resumes from its last checkpoint", async () => {
    const { threadId, runId } = agentRun;
    const done = await runEnd(client, threadId, runId);
    expect(done.status).toBe("success");
    // Resumed after node a: a ran once, b once, the input was not applied twice.
    expect((await client.threads.getState(threadId)).values).toEqual({ items: ["in", "a", "b"] });
    expect((await client.threads.get(threadId)).status).toBe("idle");
    const frames = await collect(client.runs.joinStream(threadId, runId, { lastEventId: "-1" }));
    const attempts = frames.filter((f) => f.event === "metadata").map((f) => f.data.attempt);
    expect(attempts).toEqual([1, 2]);
  }, 240_000);

  it("an export killed mid-way ends in Completed with every row exactly once", async () => {
    const api = platformApi(platform);
    const { id, sent, bucket } = exportRun;
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
  }, 120_000);

  it("a revision in flight ends DEPLOYED: the sweeper re-drives it from the phase its record shows", async () => {
    const api = platformApi(platform);
    const done = await waitFor(
      "the revision to finish after the restart",
      async () => {
        const r = (await api("GET", revision.path)).json;
        return /DEPLOYED|FAILED|INTERRUPTED/.test(r.status) ? r : undefined;
      },
      90_000,
    );
    expect(done.status, done.error).toBe("DEPLOYED");
    expect((await api("GET", `/agents/${revision.deploymentId}/ok`)).status).toBe(200);
  }, 120_000);
});
