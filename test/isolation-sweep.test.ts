import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningPlatform, startPlatform } from "../bench/platform.ts";
import { ensureTenant, newApiKey, newTenantId, storeApiKey } from "../shared/auth/api-keys.ts";
import { resetClients } from "../shared/aws/clients.ts";
import { agentClient } from "./helpers/agents.ts";
import { type IsolationResult, isolationSweep, sweepCall } from "./helpers/isolation.ts";
import { seedIsolation, type Workspace, type WorkspaceData } from "./helpers/isolation-seed.ts";

// Issue 16, item 2: two workspaces with two deployments each and data in every resource family; every route of
// the manifest tried with the other workspace's ids (and the other deployment's), every list searched for them,
// every answer and every log line grepped for the secrets. The platform is this test's own, its logs (and its
// deployments' runtimes') written to a file at debug level.
let platform: RunningPlatform;
let logDir: string;
let logFile: string;
let data: [WorkspaceData, WorkspaceData];
let closeSeed: () => Promise<void>;
let result: IsolationResult;
let sweepStarted: number;
const savedEnv = { ...process.env };

async function workspace(name: string): Promise<Workspace> {
  const tenant = newTenantId();
  const apiKey = newApiKey();
  await ensureTenant(tenant, name);
  await storeApiKey(apiKey, [tenant]);
  return { tenant, apiKey, headers: { "X-Api-Key": apiKey, "X-Tenant-Id": tenant } };
}

beforeAll(async () => {
  logDir = mkdtempSync(join(tmpdir(), "isolation-logs-"));
  logFile = join(logDir, "platform.log");
  platform = await startPlatform({ LOG_LEVEL: "debug" }, { logFile });
  const { facts } = platform;
  // Workspaces are made in the platform's own tables (no route creates one).
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: facts.dynamodb_endpoint,
    AWS_ACCESS_KEY_ID: facts.s3.access_key_id,
    AWS_SECRET_ACCESS_KEY: facts.s3.secret_access_key,
    AWS_REGION: "us-east-1",
  });
  resetClients();
  const seeded = await seedIsolation(facts, [await workspace("A"), await workspace("B")]);
  data = seeded.data;
  closeSeed = seeded.close;
  sweepStarted = Date.now();
  result = await isolationSweep({ call: sweepCall(platform.base), data });
  if (process.env.KEEP_ISOLATION_LOG)
    writeFileSync(join(logDir, "result.json"), JSON.stringify(result, null, 2));
  console.log(
    `isolation sweep: ${result.routes} routes, ${result.requests} requests, ${result.tried} routes × resources tried, ` +
      `${result.leaks.length + result.shown.length + result.secrets.length} leaks; statuses ${JSON.stringify(result.statuses)}`,
  );
}, 300_000);

afterAll(async () => {
  await closeSeed?.();
  await platform?.stop();
  if (logDir && !process.env.KEEP_ISOLATION_LOG) rmSync(logDir, { recursive: true, force: true });
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
      expect(Date.parse(run.end_time)).toBeLessThan(sweepStarted);
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
    const log = readFileSync(logFile, "utf8");
    // The log is the platform's: the refused destinations' write tests and the exports were logged there.
    expect(log.match(/"msg":"destination write test failed"/g)?.length).toBe(2);
    expect(log.match(/"msg":"bulk export finished"/g)?.length).toBe(2);
    const secrets = data.flatMap((w) => [...w.secrets, ...w.logOnlySecrets]);
    const lines = log.split("\n").filter((line) => secrets.some((s) => line.includes(s)));
    expect(lines).toEqual([]);
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

  it("assistants.get of another deployment: 404; store getItem and searchItems, crons.search: nothing of theirs", async () => {
    for (const { who, client, d } of cases()) {
      await expect(client.assistants.get(d.assistant_id), who).rejects.toThrow(/404/);
      const other = who.startsWith("another");
      const item = other
        ? client.store.getItem(d.store_namespace, d.store_key)
        : Promise.resolve(await client.store.getItem(d.store_namespace, d.store_key));
      if (other) await expect(item, who).rejects.toThrow(/404/);
      else expect(await item, who).toBeNull();
      if (other) continue;
      expect((await client.store.searchItems(d.store_namespace)).items, who).toEqual([]);
      const crons = await client.crons.search({ threadId: d.thread_id });
      expect(crons, who).toEqual([]);
      expect(JSON.stringify(await client.crons.search({ limit: 100 }))).not.toContain(d.cron_id);
    }
  });
});
