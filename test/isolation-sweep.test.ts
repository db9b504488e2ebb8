import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient } from "../harness/agents.ts";
import { type IsolationResult, isolationSweep } from "../harness/isolation.ts";
import { type IsolationRun, sweepPlatform } from "../harness/isolation-run.ts";
import type { WorkspaceData } from "../harness/isolation-seed.ts";
import { type RunningPlatform, startPlatform } from "../harness/platform.ts";
import { resetClients } from "../shared/aws/clients.ts";
import { sharedDynamoDb } from "./helpers/shared-dynamodb.ts";

// Issue 16, item 2: two workspaces with two deployments each and data in every resource family; every route of
// the manifest tried with the other workspace's ids (and the other deployment's), every list searched for them,
// every answer and every log line grepped for the secrets. The platform is this test's own, its logs (and its
// deployments' runtimes') written to a file at debug level.
let platform: RunningPlatform;
let logDir: string;
let run: IsolationRun;
let data: [WorkspaceData, WorkspaceData];
let result: IsolationResult;
const savedEnv = { ...process.env };

beforeAll(async () => {
  logDir = mkdtempSync(join(tmpdir(), "isolation-logs-"));
  const logFile = join(logDir, "platform.log");
  const started = performance.now();
  platform = await startPlatform({ LOG_LEVEL: "debug" }, { logFile, sharedDynamoDb: sharedDynamoDb() });
  const startSeconds = Math.round((performance.now() - started) / 100) / 10;
  run = await sweepPlatform(platform, logFile);
  ({ data, result } = run);
  // ISOLATION_KEEP_LOG=1 keeps the platform's log and the sweep's full result (result.json) to read.
  if (process.env.ISOLATION_KEEP_LOG)
    writeFileSync(join(logDir, "result.json"), JSON.stringify(result, null, 2));
  const f = run.figures;
  console.log(
    `isolation sweep: ${f.routes} routes, ${f.requests} requests, ${f.routes_x_resources} routes × resources tried, ` +
      `${f.leaks} leaks; statuses ${JSON.stringify(f.statuses)}; platform up in ${startSeconds} s, seeded in ${f.seed_seconds} s, swept in ${f.sweep_seconds} s`,
  );
}, 300_000);

afterAll(async () => {
  await run?.close();
  await platform?.stop();
  if (logDir && !process.env.ISOLATION_KEEP_LOG) rmSync(logDir, { recursive: true, force: true });
  process.env = savedEnv;
  resetClients();
});

describe("isolation sweep over the route manifest", () => {
  it("covers every authenticated route and every seeded resource", () => {
    expect(result.routes).toBeGreaterThan(100);
    expect(result.tried).toBeGreaterThan(300);
  });

  it("the sweep's own ids are the right ones: each workspace's own reads answer 2xx, before and after", () => {
    expect(result.ownFailures).toEqual([]);
  });

  it("another workspace's or deployment's ids are a 404 or 403 on every route, for every method", () => {
    expect(result.leaks).toEqual([]);
  });

  it("a PATCH of another workspace's trace run is kept as the caller's own (ingestion order): theirs is untouched", async () => {
    const [a, b] = data;
    for (const [owner, other] of [
      [b, a],
      [a, b],
    ]) {
      const r = await fetch(`${platform.base}/api/v1/runs/${owner.ids.trace_run_id}`, {
        headers: owner.ws.headers,
      });
      const run = (await r.json()) as { outputs: unknown; end_time: string };
      expect(run.outputs).toEqual({ answer: `answered to ${owner.marker}` });
      expect(Date.parse(run.end_time)).toBeLessThan(result.startedAt);
      const theirs = await fetch(`${platform.base}/api/v1/runs/${owner.ids.trace_run_id}`, {
        headers: other.ws.headers,
      });
      expect(theirs.status).toBe(404);
    }
  });

  it("no answer, list or search shows another workspace's or deployment's ids or data", () => {
    expect(result.shown).toEqual([]);
  });

  it("no answer holds a secret: destination credentials, deployment secrets, tokens, client secrets, API keys", () => {
    expect(result.secrets).toEqual([]);
  });

  it("no log line holds a secret", () => {
    // The log is the platform's: the refused destinations' write tests and the exports were logged there.
    expect(run.log.match(/"msg":"destination write test failed"/g)?.length).toBe(2);
    expect(run.log.match(/"msg":"bulk export finished"/g)?.length).toBe(2);
    expect(run.secretLogLines).toEqual([]);
  });
});

describe("agent threads and runs across workspaces and deployments (the SDK)", () => {
  let a1: Client;
  let foreignWs: Client;
  beforeAll(() => {
    const [a] = data;
    const facts = (w: WorkspaceData) => ({
      base_url: platform.base,
      api_key: w.ws.apiKey,
      tenant_id: w.ws.tenant,
    });
    a1 = agentClient(facts(a), a.deployments[0].deployment_id);
    // Workspace A's key on workspace B's deployment.
    foreignWs = agentClient(facts(a), data[1].deployments[0].deployment_id);
  });

  const cases = () => [
    { who: "the other deployment of the workspace", client: a1, d: data[0].deployments[1] },
    { who: "another workspace's deployment", client: foreignWs, d: data[1].deployments[0] },
  ];

  it("threads.get, getState, getHistory, runs.list, runs.get, runs.join, joinStream: 404", async () => {
    for (const { who, client, d } of cases()) {
      const tries = {
        "threads.get": () => client.threads.get(d.thread_id),
        "threads.getState": () => client.threads.getState(d.thread_id),
        "threads.getHistory": () => client.threads.getHistory(d.thread_id),
        "runs.list": () => client.runs.list(d.thread_id),
        "runs.get": () => client.runs.get(d.thread_id, d.agent_run_id),
        "runs.join": () => client.runs.join(d.thread_id, d.agent_run_id),
        "runs.joinStream": async () => {
          for await (const _ of client.runs.joinStream(d.thread_id, d.agent_run_id));
        },
      };
      for (const [name, attempt] of Object.entries(tries))
        await expect(attempt(), `${name} on ${who}`).rejects.toThrow(/404/);
    }
  });

  it("assistants.get of another deployment's or workspace's assistant: 404", async () => {
    for (const { who, client, d } of cases())
      await expect(client.assistants.get(d.assistant_id), who).rejects.toThrow(/404/);
  });

  it("store getItem: another deployment's item is not there (null); another workspace's deployment is a 404", async () => {
    const [sibling, foreign] = cases();
    const { d } = sibling;
    expect(await sibling.client.store.getItem(d.store_namespace, d.store_key)).toBeNull();
    await expect(
      foreign.client.store.getItem(foreign.d.store_namespace, foreign.d.store_key),
    ).rejects.toThrow(/404/);
  });

  it("store searchItems and crons.search under the own deployment show nothing of the other deployment's", async () => {
    const { client, d } = cases()[0];
    expect((await client.store.searchItems(d.store_namespace)).items).toEqual([]);
    expect(await client.crons.search({ threadId: d.thread_id })).toEqual([]);
    const all = JSON.stringify(await client.crons.search({ limit: 100 }));
    expect(all).not.toContain(d.cron_id);
    expect(all).toContain(data[0].deployments[0].cron_id);
  });
});

describe("the sweep itself", () => {
  const fakeWorkspace = (name: string): WorkspaceData => {
    const id = () => crypto.randomUUID();
    const dep = () => ({
      marker: `mk-${name}-${id()}`,
      deployment_id: id(),
      revision_id: id(),
      assistant_id: id(),
      thread_id: id(),
      agent_run_id: id(),
      checkpoint_id: id(),
      cron_id: id(),
      store_namespace: [`ns-${id()}`, "notes"],
      store_key: `key-${id()}`,
    });
    const deployments: WorkspaceData["deployments"] = [dep(), dep()];
    const params = [
      "session_id",
      "trace_run_id",
      "destination_id",
      "export_id",
      "export_run_id",
      "id",
      "feedback_id",
    ];
    const more = ["listener_id", "integration_id", "provider_id", "auth_id", "token_id", "api_key_id"];
    return {
      ws: { tenant: id(), apiKey: `key-${id()}`, headers: { "X-Api-Key": name } },
      marker: `mk-${name}-${id()}`,
      ids: {
        ...Object.fromEntries([...params, ...more].map((p) => [p, id()])),
        deployment_id: deployments[0].deployment_id,
        revision_id: deployments[0].revision_id,
      },
      deployments,
      secrets: [`secret-${name}-${id()}`],
      logOnlySecrets: [],
    };
  };

  it("reports a leak with its route and request: a platform that answers B's thread to A, with B's secret", async () => {
    const fake: [WorkspaceData, WorkspaceData] = [fakeWorkspace("A"), fakeWorkspace("B")];
    const [, b] = fake;
    const leaky = `/agents/${b.deployments[0].deployment_id}/threads/${b.deployments[0].thread_id}`;
    const found = await isolationSweep({
      data: fake,
      // Everything refused but one path, which answers B's thread (with B's secret) to A.
      call: async (method, path, headers) =>
        method === "GET" && path === leaky && headers["X-Api-Key"] === "A" && !headers["X-Tenant-Id"]
          ? {
              status: 200,
              text: JSON.stringify({ metadata: { owner: b.deployments[0].marker }, s: b.secrets[0] }),
            }
          : { status: 404, text: "{}" },
    });
    expect(found.leaks).toEqual([
      expect.objectContaining({
        route: "GET /agents/{deployment_id}/threads/{thread_id}",
        request: `GET ${leaky}`,
        status: 200,
      }),
    ]);
    expect(found.shown.map((f) => f.found)).toContainEqual([b.deployments[0].marker]);
    expect(found.secrets.map((f) => f.found)).toContainEqual([b.secrets[0]]);
  });
});
