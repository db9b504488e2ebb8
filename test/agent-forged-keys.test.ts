import { Client as LangSmith } from "langsmith";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { waitFor } from "../harness/export.ts";
import { gitRepo, grantTestFolders, graphRepoFiles } from "../harness/repos.ts";
import { moveAgentIndexEntries } from "../shared/agent/runs/agent-index.ts";
import { ensureTenant, newApiKey, newTenantId, storeApiKey } from "../shared/auth/api-keys.ts";
import { getItem, putItem } from "../shared/aws/ddb.ts";
import { ACTIVE_RUNS, agentKeys } from "../shared/records/agent.ts";
import { deploymentKeys } from "../shared/records/control.ts";
import { shardKey } from "../shared/records/shard.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// Issue 25 (Deliver 3, break-out 5): nothing a runtime writes can be forged into platform lookups. A runtime's
// role (LeadingKeys) lets it write any attribute of the items of its own agent partition; the issue wrote, in the
// attacker deployment's partition, an item carrying the victim deployment's by-id index keys and a CORS policy
// of its own, and the victim's CORS then allowed the attacker's origin. Here the item is written the same way
// (with the platform's client, standing in for what the runtime's role lets it write), and the platform's
// lookups must not be fooled. And a runtime's trace posts must not overwrite a run of another project.
const APP = "https://app.example";
const EVIL = "https://evil.example";
const preflight = (origin: string) => ({
  Origin: origin,
  "Access-Control-Request-Method": "POST",
  "Access-Control-Request-Headers": "x-api-key,content-type",
});

// The attacker's graph: one node runs a child whose run id is the one the input names (LangChain's `runId`),
// so the runtime's tracer posts and patches a run with that id into the deployment's tracing project.
const ATTACKER_GRAPH = `
import { Annotation, START, StateGraph } from "@langchain/langgraph";
import { RunnableLambda } from "@langchain/core/runnables";
const State = Annotation.Root({ target: Annotation(), done: Annotation() });
const forged = RunnableLambda.from(async () => ({ stolen: "overwritten" })).withConfig({ runName: "forged" });
export const graph = new StateGraph(State)
  .addNode("forge", async (s) => ({ done: await forged.invoke({ forged: true }, { runId: s.target }) }))
  .addEdge(START, "forge").compile();
`;
const victimRepo = gitRepo({
  ...graphRepoFiles(["a"]),
  "langgraph.json": JSON.stringify({
    graphs: { agent: "./src/graph.mjs:graph" },
    http: { cors: { allow_origins: [APP] } },
  }),
});
const attackerRepo = gitRepo({
  "langgraph.json": JSON.stringify({ graphs: { agent: "./src/graph.mjs:graph" } }),
  "src/graph.mjs": ATTACKER_GRAPH,
});
let victimId: string;
let attacker: Awaited<ReturnType<typeof deployedClient>>;
let attackerFacts: typeof facts;

beforeAll(async () => {
  const tenant = newTenantId();
  const key = newApiKey();
  await ensureTenant(tenant, "Attacker workspace");
  await storeApiKey(key, [tenant]);
  await grantTestFolders(tenant);
  attackerFacts = { ...facts, tenant_id: tenant, api_key: key };
  const [victim, att] = await Promise.all([
    deployedClient(facts, victimRepo.dir, "forge-victim"),
    deployedClient(attackerFacts, attackerRepo.dir, "forge-attacker"),
  ]);
  victimId = victim.deploymentId;
  attacker = att;
}, 240_000);

afterAll(() => {
  victimRepo.remove();
  attackerRepo.remove();
});

describe("an item of a runtime's own partition carrying the platform's index keys", () => {
  beforeAll(async () => {
    const scope = `${attackerFacts.tenant_id}#${attacker.deploymentId}`;
    await putItem("main", {
      PK: agentKeys.threadsPk(scope),
      SK: crypto.randomUUID(),
      GSI1PK: deploymentKeys.byIdPk(victimId),
      // Sorting before the victim's own entry (`DEPLOYMENT`): the lookup reads its index partition in order.
      GSI1SK: "A",
      // The victim's record, as the attacker would like the platform to read it.
      id: victimId,
      tenant_id: facts.tenant_id,
      name: "forged",
      status: "READY",
      active_revision_id: "forged",
      active_artifact_prefix: "forged/",
      cors: { allow_origins: [EVIL], allow_credentials: true },
      custom_auth: { disable_studio_auth: false },
    });
    // The platform keeps a record read by id for a second.
    await new Promise((r) => setTimeout(r, 1200));
  });

  it("does not become the victim's CORS policy: the attacker's origin is refused, the victim's own allowed", async () => {
    const evil = await call("OPTIONS", `/agents/${victimId}/threads`, { headers: preflight(EVIL) });
    expect(evil.headers.get("access-control-allow-origin")).toBeNull();
    expect(evil.headers.get("access-control-allow-credentials")).toBeNull();
    const app = await call("OPTIONS", `/agents/${victimId}/threads`, { headers: preflight(APP) });
    expect(app.status).toBe(204);
    expect(app.headers.get("access-control-allow-origin")).toBe(APP);
    // An actual request from the attacker's origin, with the victim's key, gets no Allow-Origin either.
    const r = await call("POST", `/agents/${victimId}/threads`, {
      headers: { ...auth, Origin: EVIL },
      body: {},
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("does not become the victim's routing record: without an API key the victim still answers 401", async () => {
    const r = await call("POST", `/agents/${victimId}/threads`, { body: {} });
    expect(r.status).toBe(401);
  });

  it("GET of the victim deployment shows the victim's record, and the attacker's workspace finds none", async () => {
    const own = await call("GET", `/v2/deployments/${victimId}`, { headers: auth });
    expect(own.status).toBe(200);
    expect(own.json.name).toMatch(/^forge-victim-/);
    const other = await call("GET", `/v2/deployments/${victimId}`, {
      headers: { "X-Api-Key": attackerFacts.api_key, "X-Tenant-Id": attackerFacts.tenant_id },
    });
    expect(other.status).toBe(404);
  });
});

describe("agent index entries left in GSI1 by an earlier version", () => {
  it("move to AGENT1's shards for agent records, and nothing else moves", async () => {
    const ACTIVE_RUNS_PK = ACTIVE_RUNS.base; // the unsharded key of earlier versions
    const scope = `${attackerFacts.tenant_id}#${attacker.deploymentId}`;
    const threadId = crypto.randomUUID();
    const runId = crypto.randomUUID();
    const runKey = { PK: agentKeys.runsPk(scope, threadId), SK: runId };
    const run = { ...runKey, thread_id: threadId, run_id: runId };
    const sk = `${scope}#${threadId}#${runId}`;
    await putItem("main", { ...run, status: "success", GSI1PK: ACTIVE_RUNS_PK, GSI1SK: sk });
    // In the same index partition, an item whose keys are no run's (its ids name another key).
    const oddKey = { PK: agentKeys.threadsPk(scope), SK: crypto.randomUUID() };
    await putItem("main", {
      ...oddKey,
      thread_id: "x",
      run_id: "y",
      GSI1PK: ACTIVE_RUNS_PK,
      GSI1SK: `${sk}#odd`,
    });
    expect(await moveAgentIndexEntries()).toBeGreaterThanOrEqual(1);
    expect(await getItem("main", runKey, true)).toMatchObject({
      AGENT1PK: shardKey(ACTIVE_RUNS, runId),
      AGENT1SK: sk,
    });
    expect(await getItem("main", runKey, true)).not.toHaveProperty("GSI1PK");
    expect(await getItem("main", oddKey, true)).toMatchObject({ GSI1PK: ACTIVE_RUNS_PK });
    expect(await getItem("main", oddKey, true)).not.toHaveProperty("AGENT1PK");
    // Again: nothing left to move of these.
    await moveAgentIndexEntries();
    expect(await getItem("main", runKey, true)).toMatchObject({
      AGENT1PK: shardKey(ACTIVE_RUNS, runId),
      AGENT1SK: sk,
    });
  });
});

describe("a runtime's traces reusing a run id of another project of its workspace", () => {
  it("leave that run as it was, and the runtime's own runs still arrive", async () => {
    const traces = new LangSmith({ apiUrl: `${base}/api/v1`, apiKey: attackerFacts.api_key });
    const otherProject = `forge-other-${crypto.randomUUID().slice(0, 8)}`;
    const victimRun = crypto.randomUUID();
    await traces.createRun({
      id: victimRun,
      name: "victim",
      run_type: "chain",
      project_name: otherProject,
      inputs: { question: "kept" },
      outputs: { answer: "kept" },
      start_time: Date.now(),
      end_time: Date.now(),
    });
    const before = await waitFor("the other project's run", async () => {
      try {
        return await traces.readRun(victimRun);
      } catch {
        return undefined;
      }
    });
    expect(before).toMatchObject({ name: "victim", outputs: { answer: "kept" } });

    const projectId = (
      await call("GET", `/v2/deployments/${attacker.deploymentId}`, {
        headers: { "X-Api-Key": attackerFacts.api_key, "X-Tenant-Id": attackerFacts.tenant_id },
      })
    ).json.tracing_project_id;
    const t = await attacker.client.threads.create();
    await attacker.client.runs.wait(t.thread_id, "agent", { input: { target: victimRun } });
    const [agentRun] = await attacker.client.runs.list(t.thread_id);
    // The runtime's own trace arrives in its project: the root ended (its child's post and patch went before).
    const root = await waitFor(
      "the runtime's own root run",
      async () => {
        try {
          const r = await traces.readRun(agentRun.run_id);
          return r.end_time ? r : undefined;
        } catch {
          return undefined;
        }
      },
      20_000,
    );
    expect(root).toMatchObject({ name: "agent", session_id: projectId });

    const after = await traces.readRun(victimRun);
    expect(after).toMatchObject({
      name: "victim",
      session_id: before.session_id,
      inputs: { question: "kept" },
      outputs: { answer: "kept" },
    });
    expect(after.session_id).not.toBe(projectId);
  }, 120_000);
});
