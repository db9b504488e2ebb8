import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newWorkspace, waitFor } from "../harness/export.ts";
import { fakeServer } from "../harness/fake-http.ts";
import { gitRepo, graphRepoFiles } from "../harness/repos.ts";
import { getItem } from "../shared/aws/ddb.ts";
import { refCommit } from "../shared/control/github.ts";
import { signatureOf } from "../shared/control/github-webhook.ts";
import { base, call } from "./helpers/cloud.ts";

// build_on_push (issue 17 item 1): GitHub's webhook deliveries, signed with the integration's webhook secret,
// posted with node's fetch as GitHub would; a push to a tracked repository and branch makes a new revision.
const INTEGRATIONS = "/v1/integrations/github";
const HOOK = `${INTEGRATIONS}/webhook`;
const V2 = "/v2/deployments";
const SECRET = `whsec-${randomUUID()}`;
const FINAL = ["DEPLOYED", "BUILD_FAILED", "DEPLOY_FAILED", "CREATE_FAILED", "INTERRUPTED", "SKIPPED"];

let ws: Awaited<ReturnType<typeof newWorkspace>>;
let integrationId: string;
let repo: { dir: string; remove: () => void };
/** The first commit of main (pushes name it), and main's head after a second commit. */
let first: string;
let head: string;
/** build_on_push, tracking main; not build_on_push, tracking main; build_on_push, tracking dev. */
let onPush: string;
let offPush: string;
let onDev: string;

const git = (...args: string[]) =>
  execFileSync("git", args, { cwd: repo.dir, stdio: "pipe" }).toString().trim();

/** Posts a delivery as GitHub does: the raw JSON bytes, signed with `secret`. */
async function deliver(
  event: string,
  payload: unknown,
  opts: { secret?: string | null; id?: string; integration?: string; raw?: string; signed?: string } = {},
) {
  const raw = opts.raw ?? JSON.stringify(payload);
  const secret = opts.secret === undefined ? SECRET : opts.secret;
  const res = await fetch(`${base}${HOOK}?integration_id=${opts.integration ?? integrationId}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "user-agent": "GitHub-Hookshot/test",
      "x-github-event": event,
      "x-github-delivery": opts.id ?? randomUUID(),
      ...(secret !== null ? { "x-hub-signature-256": signatureOf(secret, opts.signed ?? raw) } : {}),
    },
    body: raw,
  });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
}

const pushPayload = (ref: string, after: string, over: Record<string, unknown> = {}) => ({
  ref,
  before: "0".repeat(40),
  after,
  created: false,
  deleted: false,
  forced: false,
  repository: {
    full_name: "acme/agent",
    clone_url: repo.dir,
    html_url: `file://${repo.dir}`,
    default_branch: "main",
  },
  pusher: { name: "octocat" },
  ...over,
});

const revisionsOf = async (deploymentId: string) => {
  const r = await call("GET", `${V2}/${deploymentId}/revisions`, { headers: ws.headers });
  expect(r.status, r.text).toBe(200);
  return r.json.resources as { id: string; status: string; commit_sha: string | null }[];
};

async function deployment(name: string, buildOnPush: boolean, ref: string) {
  const r = await call("POST", V2, {
    headers: ws.headers,
    body: {
      name: `${name}-${randomUUID().slice(0, 8)}`,
      source: "github",
      source_config: { repo_url: repo.dir, integration_id: integrationId, build_on_push: buildOnPush },
      source_revision_config: { repo_ref: ref, langgraph_config_path: "langgraph.json" },
    },
  });
  expect(r.status, r.text).toBe(201);
  return r.json.id as string;
}

beforeAll(async () => {
  ws = await newWorkspace();
  repo = gitRepo(graphRepoFiles(["a"]), { dev: { "dev.txt": "dev" } });
  first = git("rev-parse", "main");
  writeFileSync(join(repo.dir, "later.txt"), "a later commit");
  git("add", "-A");
  git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "later");
  head = git("rev-parse", "main");
  const created = await call("POST", INTEGRATIONS, {
    headers: ws.headers,
    body: { name: "hooks", access_token: "ghs_token", api_url: "http://127.0.0.1:9", webhook_secret: SECRET },
  });
  expect(created.status, created.text).toBe(200);
  integrationId = created.json.id;
  [onPush, offPush, onDev] = await Promise.all([
    deployment("on-push", true, "main"),
    deployment("off-push", false, "main"),
    deployment("on-dev", true, "dev"),
  ]);
});
afterAll(() => repo?.remove());

describe("the integration's webhook secret", () => {
  it("is write-only: has_webhook_secret says it is set; no answer and no stored item holds it", async () => {
    const got = await call("GET", `${INTEGRATIONS}/install`, { headers: ws.headers });
    expect(got.status).toBe(200);
    expect(got.text).not.toContain(SECRET);
    const patched = await call("PATCH", `${INTEGRATIONS}/${integrationId}`, {
      headers: ws.headers,
      body: { name: "hooks" },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json).toMatchObject({ id: integrationId, name: "hooks", has_webhook_secret: true });
    expect(patched.text).not.toContain(SECRET);
    const item = await getItem("main", { PK: `T#${ws.tenant}#INTEGRATION`, SK: integrationId });
    expect(item?.webhook_secret_sealed).toBeDefined();
    expect(JSON.stringify(item)).not.toContain(SECRET);
  });

  it("PATCH replaces it (deliveries signed with the old one are refused) and null removes it", async () => {
    const created = await call("POST", INTEGRATIONS, {
      headers: ws.headers,
      body: { name: "rotating", access_token: "ghs_token", api_url: "http://127.0.0.1:9" },
    });
    expect(created.json.has_webhook_secret).toBe(false);
    const id = created.json.id;
    const ping = (secret: string) => deliver("ping", { zen: "hi" }, { integration: id, secret });
    expect((await ping("old")).status).toBe(401);
    const set = await call("PATCH", `${INTEGRATIONS}/${id}`, {
      headers: ws.headers,
      body: { webhook_secret: "old" },
    });
    expect(set.json.has_webhook_secret).toBe(true);
    expect((await ping("old")).status).toBe(200);
    await call("PATCH", `${INTEGRATIONS}/${id}`, { headers: ws.headers, body: { webhook_secret: "new" } });
    expect((await ping("old")).status).toBe(401);
    expect((await ping("new")).status).toBe(200);
    const cleared = await call("PATCH", `${INTEGRATIONS}/${id}`, {
      headers: ws.headers,
      body: { webhook_secret: null },
    });
    expect(cleared.json.has_webhook_secret).toBe(false);
    expect((await ping("new")).status).toBe(401);
  });

  it("another workspace cannot change it: 404", async () => {
    const other = await newWorkspace();
    const r = await call("PATCH", `${INTEGRATIONS}/${integrationId}`, {
      headers: other.headers,
      body: { webhook_secret: "mine now" },
    });
    expect(r.status).toBe(404);
  });
});

describe("POST /v1/integrations/github/webhook", () => {
  it("a signed ping answers 200 with no API key", async () => {
    const r = await deliver("ping", { zen: "Design for failure.", hook_id: 1 });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ event: "ping", duplicate: false, revisions: [] });
  });

  it("a wrong or missing signature, an unknown integration, one without a secret: the same 401", async () => {
    const unsigned = await deliver("ping", {}, { secret: null });
    const wrong = await deliver("ping", {}, { secret: "not the secret" });
    const unknown = await deliver("ping", {}, { integration: randomUUID() });
    for (const r of [unsigned, wrong, unknown]) expect(r.status, r.text).toBe(401);
    expect(new Set([unsigned.text, wrong.text, unknown.text]).size).toBe(1);
    const tampered = await deliver("push", pushPayload("refs/heads/main", head), {
      signed: JSON.stringify(pushPayload("refs/heads/main", first)),
    });
    expect(tampered.status).toBe(401);
  });

  it("bad input is a clear 4xx: missing headers, malformed JSON, a push without its fields", async () => {
    const noHeaders = await fetch(`${base}${HOOK}?integration_id=${integrationId}`, {
      method: "POST",
      body: "{}",
    });
    expect(noHeaders.status).toBe(400);
    expect(await noHeaders.json()).toMatchObject({ detail: expect.stringMatching(/X-GitHub-Event/) });
    const noQuery = await fetch(`${base}${HOOK}`, { method: "POST", body: "{}" });
    expect(noQuery.status).toBe(422);
    expect((await deliver("push", null, { raw: "{not json" })).status).toBe(400);
    expect((await deliver("push", { ref: "refs/heads/main" })).status).toBe(400);
  });

  it("a push to the tracked branch makes a revision of each build_on_push deployment, built from the pushed commit", async () => {
    const before = await revisionsOf(onPush);
    const r = await deliver("push", pushPayload("refs/heads/main", head));
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ event: "push", duplicate: false, ignored: null });
    expect(r.json.revisions).toEqual([{ deployment_id: onPush, revision_id: expect.any(String) }]);
    const revisionId = r.json.revisions[0].revision_id;
    const after = await revisionsOf(onPush);
    expect(after.length).toBe(before.length + 1);
    expect(after[0]).toMatchObject({ id: revisionId, commit_sha: head });
    const d = await call("GET", `${V2}/${onPush}`, { headers: ws.headers });
    expect(d.json.latest_revision_id).toBe(revisionId);
    // The pushed commit is built, not main's head of today.
    const final = await waitFor(
      "the pushed revision to finish",
      async () => {
        const got = await call("GET", `${V2}/${onPush}/revisions/${revisionId}`, { headers: ws.headers });
        return FINAL.includes(got.json.status) ? got.json : undefined;
      },
      120_000,
      200,
    );
    expect(final.status, final.error).toBe("DEPLOYED");
    expect(final.commit_sha).toBe(head);
  });

  it("a delivery of a commit that is no longer the branch's head (old, or replayed under a new id) builds nothing: 2xx, ignored saying why", async () => {
    const count = (await revisionsOf(onPush)).length;
    const old = await deliver("push", pushPayload("refs/heads/main", first));
    expect(old.status, old.text).toBe(200);
    expect(old.json).toMatchObject({
      duplicate: false,
      revisions: [],
      ignored: `${first} is no longer the head of refs/heads/main (${head} is): an old delivery is not built`,
    });
    expect((await revisionsOf(onPush)).length).toBe(count);
  });

  it("the same delivery again does nothing: 2xx, duplicate, no second revision", async () => {
    const id = randomUUID();
    const once = await deliver("push", pushPayload("refs/heads/main", head), { id });
    expect(once.status).toBe(200);
    const count = (await revisionsOf(onPush)).length;
    const again = await deliver("push", pushPayload("refs/heads/main", head), { id });
    expect(again.status, again.text).toBe(200);
    expect(again.json).toMatchObject({ duplicate: true, revisions: once.json.revisions });
    expect((await revisionsOf(onPush)).length).toBe(count);
  });

  it("two simultaneous deliveries of one id make one set of revisions", async () => {
    const id = randomUUID();
    const count = (await revisionsOf(onPush)).length;
    const answers = await Promise.all(
      [0, 1, 2].map(() => deliver("push", pushPayload("refs/heads/main", head), { id })),
    );
    for (const a of answers) expect(a.status, a.text).toBe(200);
    expect(answers.filter((a) => !a.json.duplicate).length).toBe(1);
    expect((await revisionsOf(onPush)).length).toBe(count + 1);
  });

  it("a push to another branch makes nothing for deployments tracking main; the one tracking it builds", async () => {
    const counts = [(await revisionsOf(onPush)).length, (await revisionsOf(offPush)).length];
    const dev = git("rev-parse", "dev");
    const r = await deliver("push", pushPayload("refs/heads/dev", dev));
    expect(r.status).toBe(200);
    expect(r.json.revisions).toEqual([{ deployment_id: onDev, revision_id: expect.any(String) }]);
    const none = await deliver("push", pushPayload("refs/heads/feature", dev));
    expect(none.json).toMatchObject({ revisions: [], ignored: expect.stringMatching(/no deployment/) });
    expect([(await revisionsOf(onPush)).length, (await revisionsOf(offPush)).length]).toEqual(counts);
  });

  it("a deployment with build_on_push false never gets a pushed revision", async () => {
    const revisions = await revisionsOf(offPush);
    expect(revisions.length).toBe(1);
  });

  it("a deleted branch, another repository and other events are answered 2xx and ignored", async () => {
    const count = (await revisionsOf(onPush)).length;
    const deleted = await deliver("push", pushPayload("refs/heads/main", "0".repeat(40), { deleted: true }));
    expect(deleted.status).toBe(200);
    expect(deleted.json).toMatchObject({ ignored: expect.stringMatching(/deleted/), revisions: [] });
    const elsewhere = await deliver(
      "push",
      pushPayload("refs/heads/main", head, {
        repository: { clone_url: "https://github.com/acme/other.git", default_branch: "main" },
      }),
    );
    expect(elsewhere.json.revisions).toEqual([]);
    const issues = await deliver("issues", { action: "opened" });
    expect(issues.status).toBe(200);
    expect(issues.json).toMatchObject({ event: "issues", revisions: [], ignored: expect.any(String) });
    expect((await revisionsOf(onPush)).length).toBe(count);
  });

  it("another workspace's deployments of the same repository are not built by this integration's pushes", async () => {
    const other = await newWorkspace();
    const r = await call("POST", V2, {
      headers: other.headers,
      body: {
        name: `theirs-${randomUUID().slice(0, 8)}`,
        source: "github",
        source_config: { repo_url: repo.dir, build_on_push: true },
        source_revision_config: { repo_ref: "main" },
      },
    });
    expect(r.status, r.text).toBe(201);
    const pushed = await deliver("push", pushPayload("refs/heads/main", head));
    expect(pushed.json.revisions.map((m: { deployment_id: string }) => m.deployment_id)).toEqual([onPush]);
  });
});

describe("an https repository's head", () => {
  it("is asked of the integration's API (GitHub's commits endpoint, the sha as text); an unknown ref is none", async () => {
    const sha = "a".repeat(40);
    const api = await fakeServer((req) =>
      req.path === "/repos/acme/agent/commits/feature/x"
        ? { status: 200, body: sha, type: "application/vnd.github.sha" }
        : req.path.includes("/boom/")
          ? { status: 500 }
          : { status: 404, body: { message: "No commit found for SHA: nope" } },
    );
    try {
      expect(await refCommit(api.url, "ghs_token", "acme", "agent", "refs/heads/feature/x")).toBe(sha);
      expect(api.seen[0].headers).toMatchObject({
        accept: "application/vnd.github.sha",
        authorization: "Bearer ghs_token",
      });
      expect(await refCommit(api.url, undefined, "acme", "agent", "refs/heads/nope")).toBeUndefined();
      await expect(refCommit(api.url, undefined, "acme", "boom", "refs/heads/main")).rejects.toThrow(
        /HTTP 500/,
      );
    } finally {
      await api.close();
    }
  });
});

describe("/openapi.json", () => {
  it("documents the receiver: no API key, integration_id in the query, GitHub's headers, its answers", async () => {
    const doc = (await call("GET", "/openapi.json")).json;
    const op = doc.paths[HOOK].post;
    expect(op.security).toBeUndefined();
    expect(op.description).toMatch(/build_on_push/);
    const params = op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
    expect(params).toEqual(
      expect.arrayContaining([
        "query:integration_id",
        "header:X-GitHub-Event",
        "header:X-GitHub-Delivery",
        "header:X-Hub-Signature-256",
      ]),
    );
    expect(Object.keys(op.requestBody.content)).toContain("application/json");
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "400", "401"]));
    expect(op.responses["200"].content["application/json"].schema.properties).toHaveProperty("duplicate");
    const patch = doc.paths[`${INTEGRATIONS}/{integration_id}`].patch;
    expect(patch.requestBody.content["application/json"].schema.properties).toHaveProperty("webhook_secret");
    const created = doc.paths[INTEGRATIONS].post.responses["200"].content["application/json"].schema;
    expect(created.properties).toHaveProperty("has_webhook_secret");
    expect(created.properties).not.toHaveProperty("webhook_secret");
  });
});
