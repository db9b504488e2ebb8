import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../harness/export.ts";
import { type RunningPlatform, startPlatform } from "../harness/platform.ts";
import { defaultAssistantId } from "../shared/agent/assistants/assistants.ts";
import { graphConfigArg } from "../shared/agent/hosting/local-graph.ts";
import { sharedDynamoDb } from "./helpers/shared-dynamodb.ts";

// Issue 6 item 9: `npm start -- --graph ./langgraph.json` serves a graph folder as deployment `local`, without
// a deployment. The folder is a copy of the example agent inside this repository (see beforeAll).
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

beforeAll(async () => {
  // Inside this repository, as examples/agent is (issue 27): a folder without a node_modules of its own resolves
  // the repository's packages from the folders above it, as Node does, and installs nothing. With the example's
  // own node_modules (when someone installed them), those.
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
    "the local graphs to load",
    async () => {
      if (platform!.child.exitCode != null)
        throw new Error(`the platform exited with ${platform!.child.exitCode}`);
      const r = await fetch(`${platform!.base}/agents/local/ok`);
      return r.status === 200 || undefined;
    },
    150_000,
    200,
  );
  expect(existsSync(path.join(folder, "node_modules"))).toBe(ownPackages);
  client = new Client({ apiUrl: `${platform.base}/agents/local`, apiKey: platform.facts.api_key });
}, 200_000);

afterAll(async () => {
  await platform?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe("--graph: local development without a deployment", () => {
  it("GET /agents/local/ok answers once the graphs are loaded", async () => {
    const r = await fetch(`${platform!.base}/agents/local/ok`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ok: true });
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
    // Read from the graphs' types, which resolve from the repository's packages above the folder too.
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

describe("graphConfigArg", () => {
  it("reads --graph <path>, --graph=<path>, then AGENT_GRAPH_CONFIG", () => {
    expect(graphConfigArg(["--graph", "a.json"], {})).toBe("a.json");
    expect(graphConfigArg(["--graph=b.json"], {})).toBe("b.json");
    expect(graphConfigArg([], { AGENT_GRAPH_CONFIG: "c.json" })).toBe("c.json");
    expect(graphConfigArg([], {})).toBeUndefined();
  });
});
