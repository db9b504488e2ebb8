import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newWorkspace, waitFor } from "../harness/export.ts";
import { type Files, gitRepo, graphRepoFiles } from "../harness/repos.ts";
import { dynamo, s3 } from "../shared/aws/clients.ts";
import { config } from "../shared/config.ts";
import { tableName } from "../shared/tables.ts";
import { auth, call, facts } from "./helpers/cloud.ts";

// Spec A (control plane) against the local cloud: deployments of local git repositories through the revision
// pipeline (the same ASL as AWS, the build step in a child process as CodeBuild would run it).
const V2 = "/v2/deployments";
const FINAL = ["DEPLOYED", "BUILD_FAILED", "DEPLOY_FAILED", "CREATE_FAILED", "INTERRUPTED", "SKIPPED"];
const repos: { remove: () => void }[] = [];
const unique = (label: string) => `${label}-${crypto.randomUUID().slice(0, 8)}`;

function repo(files: Files, branches: Record<string, Files> = {}) {
  const r = gitRepo(files, branches);
  repos.push(r);
  return r.dir;
}
afterAll(() => {
  for (const r of repos) r.remove();
});

function body(repoUrl: string, extra: Record<string, unknown> = {}) {
  return {
    name: unique("agent"),
    source: "github",
    source_config: { repo_url: repoUrl, deployment_type: "dev", build_on_push: false },
    source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
    ...extra,
  };
}

async function revision(deploymentId: string, revisionId: string, headers = auth) {
  const r = await call("GET", `${V2}/${deploymentId}/revisions/${revisionId}`, { headers });
  expect(r.status).toBe(200);
  return r.json;
}

/** Polls a revision as clients do until its status is final; returns it with every status it showed. */
async function settle(deploymentId: string, revisionId: string, headers = auth) {
  const seen: string[] = [];
  const final = await waitFor(
    `revision ${revisionId} to finish`,
    async () => {
      const r = await revision(deploymentId, revisionId, headers);
      if (seen.at(-1) !== r.status) seen.push(r.status);
      return FINAL.includes(r.status) ? r : undefined;
    },
    90_000,
    100,
  );
  return { ...final, seen };
}

async function logs(deploymentId: string, revisionId: string) {
  const r = await call("GET", `${V2}/${deploymentId}/revisions/${revisionId}/logs`, { headers: auth });
  expect(r.status).toBe(200);
  return r.json as { build_log: string; deploy_log: string };
}

describe("deployments: the typical flow", () => {
  let dir: string;
  beforeAll(() => {
    dir = repo(graphRepoFiles(["greet"]), { v2: graphRepoFiles(["greet", "shout"]) });
  });

  it("POST → GET → revision DEPLOYED → agent server answers → PATCH → second revision → DELETE", async () => {
    const created = await call("POST", V2, {
      headers: auth,
      body: body(dir, { secrets: [{ name: "GREETING", value: "s3cret-value" }] }),
    });
    expect(created.status).toBe(201);
    const d = created.json;
    expect(d).toMatchObject({
      id: expect.any(String),
      latest_revision_id: expect.any(String),
      source: "github",
      status: "READY",
      active_revision_id: null,
      secrets: [{ name: "GREETING" }],
      source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
    });
    expect(created.text).not.toContain("s3cret-value");

    const got = await call("GET", `${V2}/${d.id}`, { headers: auth });
    expect(got.status).toBe(200);
    expect(got.json.id).toBe(d.id);

    const first = await settle(d.id, d.latest_revision_id);
    expect(first.status, first.error).toBe("DEPLOYED");
    expect(first.status_history.map((h: any) => h.status)).toEqual([
      "QUEUED",
      "AWAITING_BUILD",
      "BUILDING",
      "AWAITING_DEPLOY",
      "DEPLOYING",
      "DEPLOYED",
    ]);
    expect(first.graphs).toEqual([{ graph_id: "agent", export_name: "graph", nodes: ["greet"] }]);
    expect(first.commit_sha).toMatch(/^[0-9a-f]{40}$/);
    const ok = await call("GET", `/agents/${d.id}/ok`, { headers: auth });
    expect(ok.status).toBe(200);
    expect((await call("GET", `${V2}/${d.id}`, { headers: auth })).json.active_revision_id).toBe(first.id);

    const patched = await call("PATCH", `${V2}/${d.id}`, {
      headers: auth,
      body: { source_revision_config: { repo_ref: "v2" } },
    });
    expect(patched.status).toBe(200);
    const second = patched.json.latest_revision_id;
    expect(second).not.toBe(first.id);
    expect(patched.json.source_revision_config.repo_ref).toBe("v2");
    const done = await settle(d.id, second);
    expect(done.status, done.error).toBe("DEPLOYED");
    expect(done.graphs[0].nodes).toEqual(["greet", "shout"]);

    const list = await call("GET", `${V2}/${d.id}/revisions`, { headers: auth });
    expect(list.status).toBe(200);
    expect(list.json.resources.map((r: any) => r.id)).toEqual([second, first.id]);
    expect(list.json.offset).toBe(2);

    const build = (await logs(d.id, second)).build_log;
    expect(build).toContain("Build succeeded");
    // Each build's exchange (its job held the repository token and the secrets) is gone once it finished.
    const exchange = await s3().send(
      new ListObjectsV2Command({
        Bucket: config.artifactBucket,
        Prefix: `builds/${facts.tenant_id}/${d.id}/`,
      }),
    );
    expect(exchange.KeyCount).toBe(0);

    const del = await call("DELETE", `${V2}/${d.id}`, { headers: auth });
    expect(del.status).toBe(204);
    expect((await call("GET", `${V2}/${d.id}`, { headers: auth })).status).toBe(404);
    expect((await call("GET", `${V2}/${d.id}/revisions/${second}`, { headers: auth })).status).toBe(404);
    expect((await call("GET", `/agents/${d.id}/ok`, { headers: auth })).status).toBe(404);
  });

  it("answers under /api-host/v2 as a self-hosted control plane does", async () => {
    const r = await call("GET", `/api-host${V2}?limit=1`, { headers: auth });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ resources: expect.any(Array), offset: expect.any(Number) });
  });
});

describe("deployments: failures keep the previous revision serving", () => {
  it("a repository without its graph config ends BUILD_FAILED with a log line saying so", async () => {
    const dir = repo({ "README.md": "no graph here\n" });
    const d = (await call("POST", V2, { headers: auth, body: body(dir) })).json;
    const r = await settle(d.id, d.latest_revision_id);
    expect(r.status).toBe("BUILD_FAILED");
    expect(r.error).toMatch(/langgraph\.json/);
    expect((await logs(d.id, r.id)).build_log).toMatch(/BUILD FAILED: .*langgraph\.json/);
    expect((await call("GET", `/agents/${d.id}/ok`, { headers: auth })).status).toBe(503);
  });

  it("a graph that throws on import ends DEPLOY_FAILED and the previous revision keeps serving", async () => {
    const dir = repo(graphRepoFiles(["greet"]), {
      broken: graphRepoFiles(["greet"], { prelude: `throw new Error("graph module exploded");` }),
    });
    const d = (await call("POST", V2, { headers: auth, body: body(dir) })).json;
    const good = await settle(d.id, d.latest_revision_id);
    expect(good.status, good.error).toBe("DEPLOYED");
    const patched = await call("PATCH", `${V2}/${d.id}`, {
      headers: auth,
      body: { source_revision_config: { repo_ref: "broken" } },
    });
    const bad = await settle(d.id, patched.json.latest_revision_id);
    expect(bad.status).toBe("DEPLOY_FAILED");
    expect(bad.error).toContain("graph module exploded");
    expect((await logs(d.id, bad.id)).deploy_log).toContain("DEPLOY FAILED");
    const now = (await call("GET", `${V2}/${d.id}`, { headers: auth })).json;
    expect(now.active_revision_id).toBe(good.id);
    expect(now.latest_revision_id).toBe(bad.id);
    expect((await call("GET", `/agents/${d.id}/ok`, { headers: auth })).status).toBe(200);
  });

  it("a newer revision interrupts one still in flight; only the newest goes live", async () => {
    const dir = repo(graphRepoFiles(["a"]), { b: graphRepoFiles(["a", "b"]) });
    const d = (await call("POST", V2, { headers: auth, body: body(dir) })).json;
    const patched = await call("PATCH", `${V2}/${d.id}`, {
      headers: auth,
      body: { source_revision_config: { repo_ref: "b" } },
    });
    const first = await settle(d.id, d.latest_revision_id);
    expect(first.status).toBe("INTERRUPTED");
    const second = await settle(d.id, patched.json.latest_revision_id);
    expect(second.status, second.error).toBe("DEPLOYED");
    expect((await call("GET", `${V2}/${d.id}`, { headers: auth })).json.active_revision_id).toBe(second.id);
  });

  it("redeploying a built revision deploys its artifact again without a build", async () => {
    const dir = repo(graphRepoFiles(["x"]));
    const d = (await call("POST", V2, { headers: auth, body: body(dir) })).json;
    const first = await settle(d.id, d.latest_revision_id);
    expect(first.status).toBe("DEPLOYED");
    const r = await call("POST", `${V2}/${d.id}/revisions/${first.id}/redeploy`, { headers: auth });
    expect(r.status).toBe(200);
    const again = await settle(d.id, r.json.latest_revision_id);
    expect(again.status, again.error).toBe("DEPLOYED");
    expect(again.redeploy_of).toBe(first.id);
    expect(again.seen).not.toContain("BUILDING");
    expect(again.status_history.map((h: any) => h.status)).not.toContain("BUILDING");
  });
});

describe("deployments: secrets are write-only and reach the graphs", () => {
  it("the graph sees its secrets as environment; values are never returned nor stored in clear", async () => {
    const needsSecret = graphRepoFiles(["g"], {
      prelude: `if (process.env.API_TOKEN !== "tok-123") throw new Error("API_TOKEN missing");`,
    });
    const dir = repo(needsSecret);
    const created = await call("POST", V2, {
      headers: auth,
      body: body(dir, { secrets: [{ name: "API_TOKEN", value: "tok-123" }] }),
    });
    const d = created.json;
    const ok = await settle(d.id, d.latest_revision_id);
    expect(ok.status, ok.error).toBe("DEPLOYED");
    const raw = await dynamo().send(
      new GetItemCommand({
        TableName: tableName("main"),
        Key: { PK: { S: `T#${d.tenant_id}#DEPLOYMENT` }, SK: { S: d.id } },
      }),
    );
    expect(JSON.stringify(raw.Item)).not.toContain("tok-123");
    const listed = await call("GET", `${V2}?deployment_ids=${d.id}`, { headers: auth });
    expect(listed.json.resources).toHaveLength(1);
    expect(listed.text).not.toContain("tok-123");

    // Secrets replaced by none: the next revision's graph no longer finds its token.
    const patched = await call("PATCH", `${V2}/${d.id}`, {
      headers: auth,
      body: { secrets: [], source_revision_config: {} },
    });
    expect(patched.json.secrets).toEqual([]);
    const failed = await settle(d.id, patched.json.latest_revision_id);
    expect(failed.status).toBe("DEPLOY_FAILED");
    expect(failed.error).toContain("API_TOKEN missing");
  });
});

describe("deployments: validation, listing and tenancy", () => {
  const dir = () => repo(graphRepoFiles(["n"]));

  it.each([
    ["no name", { name: undefined }, ["body", "name"]],
    ["unknown source", { source: "bitbucket" }, ["body", "source"]],
    [
      "unknown deployment_type",
      { source_config: { repo_url: "/tmp/x", deployment_type: "huge" } },
      ["body", "source_config", "deployment_type"],
    ],
    ["no repo_url", { source_config: { deployment_type: "dev" } }, ["body", "source_config", "repo_url"]],
    [
      "a custom_url (not served here)",
      { source_config: { repo_url: "/tmp/x", custom_url: "https://agents.example.com" } },
      ["body", "source_config", "custom_url"],
    ],
    [
      "an image_uri (not served here)",
      { source_revision_config: { image_uri: "123.dkr.ecr.eu-west-1.amazonaws.com/agent:1" } },
      ["body", "source_revision_config", "image_uri"],
    ],
    [
      "a resource_spec (not served here)",
      { source_config: { repo_url: "/tmp/x", resource_spec: { cpu: 2 } } },
      ["body", "source_config", "resource_spec"],
    ],
    [
      "unknown integration",
      { source_config: { repo_url: "/tmp/x", integration_id: crypto.randomUUID() } },
      ["body", "source_config", "integration_id"],
    ],
    [
      "unknown listener",
      { source_config: { repo_url: "/tmp/x", listener_id: crypto.randomUUID() } },
      ["body", "source_config", "listener_id"],
    ],
    [
      "a secret name that is not an env name",
      { secrets: [{ name: "a-b", value: "v" }] },
      ["body", "secrets", 0, "name"],
    ],
    [
      "a reserved secret name",
      { secrets: [{ name: "NODE_OPTIONS", value: "v" }] },
      ["body", "secrets", 0, "name"],
    ],
    [
      "a loader variable as a secret name (OPENSSL_CONF)",
      {
        secrets: [
          { name: "OK_NAME", value: "v" },
          { name: "OPENSSL_CONF", value: "/tmp/evil.cnf" },
        ],
      },
      ["body", "secrets", 1, "name"],
    ],
    [
      "a proxy variable in lower case as a secret name",
      { secrets: [{ name: "https_proxy", value: "http://evil.example" }] },
      ["body", "secrets", 0, "name"],
    ],
    [
      "an over-long secret name",
      { secrets: [{ name: "A".repeat(129), value: "v" }] },
      ["body", "secrets", 0, "name"],
    ],
  ])("422 for %s, naming the field", async (_label, patch, loc) => {
    const b: any = { ...body("/tmp/unused"), ...patch };
    for (const k of Object.keys(b)) if (b[k] === undefined) delete b[k];
    const r = await call("POST", V2, { headers: auth, body: b });
    expect(r.status).toBe(422);
    expect(r.json.detail.map((i: any) => i.loc)).toContainEqual(loc);
  });

  it("a second deployment with the same name is a 409", async () => {
    const b = body(dir());
    expect((await call("POST", V2, { headers: auth, body: b })).status).toBe(201);
    expect((await call("POST", V2, { headers: auth, body: b })).status).toBe(409);
  });

  it("lists with limit/offset/name_contains and ids of other workspaces are 404", async () => {
    const ws = await newWorkspace();
    const tag = unique("list");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await call("POST", V2, { headers: ws.headers, body: body(dir(), { name: `${tag}-${i}` }) });
      expect(r.status).toBe(201);
      ids.push(r.json.id);
    }
    const page1 = await call("GET", `${V2}?limit=2&name_contains=${tag}`, { headers: ws.headers });
    expect(page1.json.resources.map((d: any) => d.id)).toEqual([ids[2], ids[1]]);
    expect(page1.json.offset).toBe(2);
    const page2 = await call("GET", `${V2}?limit=2&offset=2&name_contains=${tag}`, { headers: ws.headers });
    expect(page2.json.resources.map((d: any) => d.id)).toEqual([ids[0]]);
    expect((await call("GET", `${V2}?limit=0`, { headers: ws.headers })).status).toBe(422);

    expect((await call("GET", `${V2}/${ids[0]}`, { headers: auth })).status).toBe(404);
    expect((await call("PATCH", `${V2}/${ids[0]}`, { headers: auth, body: {} })).status).toBe(404);
    expect((await call("DELETE", `${V2}/${ids[0]}`, { headers: auth })).status).toBe(404);
    expect((await call("GET", `${V2}/${ids[0]}/revisions`, { headers: auth })).status).toBe(404);
    expect((await call("GET", `${V2}?deployment_ids=${ids[0]}`, { headers: auth })).json.resources).toEqual(
      [],
    );
    for (const id of ids)
      await settle(
        id,
        (await call("GET", `${V2}/${id}`, { headers: ws.headers })).json.latest_revision_id,
        ws.headers,
      );
  });

  it("each deployment gets a tracing project; delete_tracing_project=true deletes it too", async () => {
    const d = (await call("POST", V2, { headers: auth, body: body(dir()) })).json;
    expect(d.tracing_project_id).toEqual(expect.any(String));
    const project = await call("GET", `/api/v1/sessions/${d.tracing_project_id}`, { headers: auth });
    expect(project.status).toBe(200);
    expect(project.json.name).toBe(d.name);
    await settle(d.id, d.latest_revision_id);
    expect(
      (await call("DELETE", `${V2}/${d.id}?delete_tracing_project=true`, { headers: auth })).status,
    ).toBe(204);
    expect((await call("GET", `/api/v1/sessions/${d.tracing_project_id}`, { headers: auth })).status).toBe(
      404,
    );
  });
});
