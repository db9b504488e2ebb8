import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fireCronTick } from "../harness/agents.ts";
import { waitFor } from "../harness/export.ts";
import { type RunningPlatform, startPlatform } from "../harness/platform.ts";
import { defaultAssistantId } from "../shared/agent/assistants/assistants.ts";
import { sharedDynamoDb } from "./helpers/shared-dynamodb.ts";

// `npm start -- --graph ./langgraph.json` deploys a graph folder as deployment `local` of the operator's
// workspace — an ordinary deployment (issue 34 item 2), so crons, metrics and every function see it — and
// `/agents/local` names it. The folder is a copy of the example agent inside this repository (see beforeAll).
const EXAMPLE = fileURLToPath(new URL("../examples/agent", import.meta.url));
const REPO = fileURLToPath(new URL("..", import.meta.url));

const APP = "https://app.example";
const AUTH = `import { Auth, HTTPException, isStudioUser } from "@langchain/langgraph-sdk/auth";
export const auth = new Auth()
  .authenticate((request: Request) => {
    if (request.headers.get("authorization") !== "Bearer dev-token") throw new HTTPException(401, { message: "Who are you?" });
    return "dev";
  })
  .on("threads", ({ user, value }) => {
    if (isStudioUser(user)) return;
    return { owner: user.identity };
  });
`;

let tmp: string;
let platform: RunningPlatform | undefined;
let client: Client;
/** The deployment `--graph` made, by its id. */
let deploymentId: string;
const v2 = async (route: string) => {
  const r = await fetch(`${platform!.base}${route}`, { headers: { "x-api-key": platform!.facts.api_key } });
  expect(r.status).toBe(200);
  return (await r.json()) as any;
};

beforeAll(async () => {
  // Inside this repository, as examples/agent is: the build copies the folder (without node_modules) and installs
  // its lockfile, as any deployment's; the folder itself is left as it was.
  await mkdir(path.join(REPO, ".cache"), { recursive: true });
  tmp = await mkdtemp(path.join(REPO, ".cache", "local-graph-test-"));
  const folder = path.join(tmp, "agent");
  await cp(EXAMPLE, folder, { recursive: true, verbatimSymlinks: true });
  const ownPackages = existsSync(path.join(EXAMPLE, "node_modules"));
  // Its langgraph.json with custom auth and http.cors, which apply to `local` as to a deployment.
  const config = JSON.parse(await readFile(path.join(folder, "langgraph.json"), "utf8"));
  await writeFile(
    path.join(folder, "langgraph.json"),
    JSON.stringify({
      ...config,
      auth: { path: "./src/auth.ts:auth" },
      http: { cors: { allow_origins: [APP] } },
    }),
  );
  await writeFile(path.join(folder, "src", "auth.ts"), AUTH);
  platform = await startPlatform(
    {},
    {
      args: ["--graph", path.join(folder, "langgraph.json")],
      sharedDynamoDb: sharedDynamoDb(),
      logFile: path.join(tmp, "platform.log"),
    },
  );
  await waitFor(
    "the folder to be deployed",
    async () => {
      if (platform!.child.exitCode != null)
        throw new Error(`the platform exited with ${platform!.child.exitCode}`);
      const r = await fetch(`${platform!.base}/agents/local/ok`, {
        headers: { "x-api-key": platform!.facts.api_key },
      });
      return r.status === 200 || undefined;
    },
    240_000,
    250,
  );
  expect(existsSync(path.join(folder, "node_modules"))).toBe(ownPackages);
  client = new Client({ apiUrl: `${platform.base}/agents/local`, apiKey: platform.facts.api_key });
  const named = (await v2("/v2/deployments?name_contains=local")).resources.filter(
    (d: { name: string }) => d.name === "local",
  );
  expect(named).toHaveLength(1);
  deploymentId = named[0].id;
}, 300_000);

afterAll(async () => {
  await platform?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe("--graph: a folder deployed as deployment local", () => {
  it("is an ordinary deployment of the operator's workspace: its record, a DEPLOYED revision built from the folder", async () => {
    const d = await v2(`/v2/deployments/${deploymentId}`);
    expect(d).toMatchObject({ name: "local", source_config: { repo_url: path.join(tmp, "agent") } });
    const revision = await v2(`/v2/deployments/${deploymentId}/revisions/${d.latest_revision_id}`);
    expect(revision.status).toBe("DEPLOYED");
    expect(d.active_revision_id).toBe(d.latest_revision_id);
    // The same agent server at /agents/local and at its id.
    const byId = new Client({
      apiUrl: `${platform!.base}/agents/${deploymentId}`,
      apiKey: platform!.facts.api_key,
    });
    const t = await client.threads.create();
    expect((await byId.threads.get(t.thread_id)).thread_id).toBe(t.thread_id);
  });

  it("GET /agents/local/ok answers 200 once deployed; without the API key, 401", async () => {
    const r = await fetch(`${platform!.base}/agents/local/ok`, {
      headers: { "x-api-key": platform!.facts.api_key },
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ok: true });
    expect((await fetch(`${platform!.base}/agents/local/ok`)).status).toBe(401);
  });

  it("its cron survives its tick and creates a run (the cron tick used to delete it: no record to find)", async () => {
    const cron = await client.crons.create(defaultAssistantId("agent"), {
      schedule: "* * * * *",
      input: { messages: [{ role: "user", content: "weather in Paris?" }] },
      onRunCompleted: "keep",
    });
    const lambda = new LambdaClient({
      endpoint: platform!.facts.s3.endpoint,
      region: "us-east-1",
      credentials: {
        accessKeyId: platform!.facts.s3.access_key_id,
        secretAccessKey: platform!.facts.s3.secret_access_key,
      },
    });
    const fired = await fireCronTick(platform!.facts, deploymentId, cron.cron_id, cron.next_run_date, lambda);
    expect(fired.outcome).toBe("fired");
    expect(fired.run_id).toEqual(expect.any(String));
    const kept = await client.crons.search({ assistantId: defaultAssistantId("agent") });
    expect(kept.map((c) => c.cron_id)).toContain(cron.cron_id);
    await client.crons.delete(cron.cron_id);
  });

  it("GET /agents/local/metrics answers (it was a 404)", async () => {
    const r = await fetch(`${platform!.base}/agents/local/metrics?format=json`, {
      headers: { "x-api-key": platform!.facts.api_key },
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      lg_api_num_pending_runs: expect.any(Number),
      lg_api_num_running_runs: expect.any(Number),
    });
  });

  it("the config's graphs serve through the SDK as deployment local, with their default assistants", async () => {
    const found = await client.assistants.search();
    expect(found).toHaveLength(2);
    expect(found).toEqual(
      expect.arrayContaining(
        ["agent", "agent_with_approval"].map((graph_id) =>
          expect.objectContaining({
            assistant_id: defaultAssistantId(graph_id),
            graph_id,
            metadata: { created_by: "system" },
          }),
        ),
      ),
    );
    const g = await client.assistants.getGraph("fe096781-5601-53d2-b2f6-0d3403f7e9ca");
    expect(g.nodes.map((n) => n.id)).toEqual(expect.arrayContaining(["agent", "tools"]));
    const schemas = await client.assistants.getSchemas(defaultAssistantId("agent"));
    expect(schemas.state_schema).toMatchObject({ properties: { messages: {} } });
    // Read from the graphs' types (the build log, which the start prints).
    expect(await readFile(path.join(tmp, "platform.log"), "utf8")).toContain(
      "graph schemas: read from types for 2 of 2 graph(s)",
    );
  });

  it("the local deployment needs the API key", async () => {
    const r = await fetch(`${platform!.base}/agents/local/assistants/search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(r.status).toBe(401);
    expect(await r.json()).toEqual({ detail: "Who are you?" });
  });

  it("langgraph.json auth and http.cors apply to the local deployment too", async () => {
    const user = new Client({
      apiUrl: `${platform!.base}/agents/local`,
      apiKey: null,
      defaultHeaders: { Authorization: "Bearer dev-token" },
    });
    const t = await user.threads.create();
    expect(t.metadata).toMatchObject({ owner: "dev" });
    expect((await client.threads.get(t.thread_id)).thread_id).toBe(t.thread_id);
    const preflight = await fetch(`${platform!.base}/agents/local/threads`, {
      method: "OPTIONS",
      headers: { Origin: APP, "Access-Control-Request-Method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(APP);
    const other = await fetch(`${platform!.base}/agents/local/threads`, {
      method: "OPTIONS",
      headers: { Origin: "https://other.example", "Access-Control-Request-Method": "POST" },
    });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });
});
