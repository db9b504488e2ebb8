import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../harness/export.ts";
import { type Files, gitRepo } from "../harness/repos.ts";
import { ensureTenant, newApiKey, newTenantId, storeApiKey } from "../shared/auth/api-keys.ts";
import { grantedFolders, grantFolder, revokeFolder } from "../shared/control/repo-grants.ts";
import { call, cloudFacts } from "./helpers/cloud.ts";

// Issue 33, finding 7: local repositories belong to a workspace. Workspace B goes after a folder the operator
// granted workspace A (its .env with it), directly, through a symlink, and by changing a link after creation.
const V2 = "/v2/deployments";
const FINAL = ["DEPLOYED", "BUILD_FAILED", "DEPLOY_FAILED", "CREATE_FAILED", "INTERRUPTED"];
const NOT_GRANTED = /under one the operator granted this workspace \(npm run grant-folder\)/;
const GIT_OUTSIDE = /git repository reads files outside the folders the operator granted this workspace/;
const FILES: Files = {
  "langgraph.json": JSON.stringify({ graphs: { agent: "./graph.mjs:graph" }, env: ".env" }),
  "graph.mjs": "export const graph = {};\n",
  ".env": "SECRET_OF_A=a-secret-7f3c\n",
};

const folders: string[] = [];
const folder = (label: string) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), label)));
  folders.push(dir);
  return dir;
};

async function workspace(granted: string) {
  const tenant = newTenantId();
  const key = newApiKey();
  await ensureTenant(tenant, "grants test");
  await storeApiKey(key, [tenant]);
  await grantFolder(tenant, granted);
  return { tenant, headers: { "X-Api-Key": key, "X-Tenant-Id": tenant } };
}

const deploy = (headers: Record<string, string>, repoUrl: string) =>
  call("POST", V2, {
    headers,
    body: {
      name: `grants-${crypto.randomUUID().slice(0, 8)}`,
      source: "github",
      source_config: { repo_url: repoUrl, deployment_type: "dev", build_on_push: false },
      source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
    },
  });

const repoUrlIssue = (r: { json: any }) =>
  r.json?.detail?.find((d: { loc: string[] }) => d.loc.join(".") === "body.source_config.repo_url")?.msg;

const settled = (headers: Record<string, string>, id: string, rev: string) =>
  waitFor(
    "the revision to end",
    async () => {
      const r = await call("GET", `${V2}/${id}/revisions/${rev}`, { headers });
      return FINAL.includes(r.json?.status) ? r.json : undefined;
    },
    90_000,
    200,
  );

/** A new revision of the deployment (built from its repository again), once it ended. */
async function rebuilt(headers: Record<string, string>, id: string) {
  const patched = await call("PATCH", `${V2}/${id}`, {
    headers,
    body: { source_revision_config: { repo_ref: "main" } },
  });
  expect(patched.status).toBe(200);
  return settled(headers, id, patched.json.latest_revision_id);
}

let a: Awaited<ReturnType<typeof workspace>>;
let b: Awaited<ReturnType<typeof workspace>>;
let grantB: string;
let repoA: string;
let repoB: string;

beforeAll(async () => {
  const grantA = folder("grant-a-");
  grantB = folder("grant-b-");
  [a, b] = await Promise.all([workspace(grantA), workspace(grantB)]);
  repoA = gitRepo(FILES, {}, { parent: grantA }).dir;
  repoB = gitRepo(FILES, {}, { parent: grantB }).dir;
});

afterAll(() => {
  for (const f of folders) rmSync(f, { recursive: true, force: true });
});

describe("local repositories belong to the workspace the operator granted them", () => {
  it("a workspace deploys a folder under its own grant", async () => {
    expect((await deploy(a.headers, repoA)).status).toBe(201);
  });

  it("another workspace's granted folder is refused at creation (a path or a file:// URL), naming why", async () => {
    for (const url of [repoA, pathToFileURL(repoA).href]) {
      const r = await deploy(b.headers, url);
      expect(r.status).toBe(422);
      expect(repoUrlIssue(r)).toMatch(NOT_GRANTED);
    }
  });

  it("the platform's own checkout is not granted to a workspace the operator did not give it", async () => {
    const r = await deploy(b.headers, join(process.cwd(), "examples", "agent"));
    expect(r.status).toBe(422);
    expect(repoUrlIssue(r)).toMatch(NOT_GRANTED);
  });

  it("the bootstrap workspace is granted the folder the platform started in", async () => {
    expect(await grantedFolders(cloudFacts.tenant_id)).toContain(realpathSync(process.cwd()));
  });

  it("a symlink in a granted folder that leads into another workspace's folder is refused at creation", async () => {
    const link = join(grantB, `link-${crypto.randomUUID().slice(0, 8)}`);
    symlinkSync(repoA, link);
    const r = await deploy(b.headers, link);
    expect(r.status).toBe(422);
    expect(repoUrlIssue(r)).toMatch(NOT_GRANTED);
  });

  it("the build checks again after resolving symlinks: a link turned to another workspace's folder fails it", async () => {
    const link = join(grantB, `swap-${crypto.randomUUID().slice(0, 8)}`);
    symlinkSync(repoB, link);
    const created = await deploy(b.headers, link);
    expect(created.status).toBe(201);
    await settled(b.headers, created.json.id, created.json.latest_revision_id);
    unlinkSync(link);
    symlinkSync(repoA, link);
    const second = await rebuilt(b.headers, created.json.id);
    expect(second.status).toBe("BUILD_FAILED");
    expect(second.error).toMatch(NOT_GRANTED);
  });

  it("a withdrawn grant fails the workspace's next build", async () => {
    const c = await workspace(folder("grant-c-"));
    const [grantC] = await grantedFolders(c.tenant);
    const repoC = gitRepo(FILES, {}, { parent: grantC }).dir;
    const created = await deploy(c.headers, repoC);
    expect(created.status).toBe(201);
    await settled(c.headers, created.json.id, created.json.latest_revision_id);
    await revokeFolder(c.tenant, grantC);
    const second = await rebuilt(c.headers, created.json.id);
    expect(second.status).toBe("BUILD_FAILED");
    expect(second.error).toMatch(NOT_GRANTED);
  });

  // Issue 33, second review: git reads a repository from wherever its .git says. Before, each of these folders in
  // B's grant passed the grant check (the folder is B's) and git cloned A's repository into B's deployment.
  it("a git repository whose .git leads into another workspace's folder is refused: a gitdir file, a link, alternates", async () => {
    const gitdirFile = join(grantB, `gitdir-${crypto.randomUUID().slice(0, 8)}`);
    mkdirSync(gitdirFile);
    writeFileSync(join(gitdirFile, ".git"), `gitdir: ${join(repoA, ".git")}\n`);
    const gitLink = join(grantB, `gitlink-${crypto.randomUUID().slice(0, 8)}`);
    mkdirSync(gitLink);
    symlinkSync(join(repoA, ".git"), join(gitLink, ".git"));
    // B's own repository, borrowing A's objects and A's branch (a ref file linked to A's).
    const borrowing = gitRepo({ "README.md": "b\n" }, {}, { parent: grantB }).dir;
    writeFileSync(
      join(borrowing, ".git", "objects", "info", "alternates"),
      `${join(repoA, ".git", "objects")}\n`,
    );
    symlinkSync(join(repoA, ".git", "refs", "heads", "main"), join(borrowing, ".git", "refs", "heads", "a"));
    for (const url of [gitdirFile, pathToFileURL(gitLink).href, borrowing]) {
      const r = await deploy(b.headers, url);
      expect(r.status, url).toBe(422);
      expect(repoUrlIssue(r)).toMatch(GIT_OUTSIDE);
    }
  });

  it("the build checks the repository's .git again: one turned into a gitdir file to another's fails it", async () => {
    const own = gitRepo(FILES, {}, { parent: grantB }).dir;
    const created = await deploy(b.headers, own);
    expect(created.status).toBe(201);
    await settled(b.headers, created.json.id, created.json.latest_revision_id);
    renameSync(join(own, ".git"), join(own, "old-git"));
    writeFileSync(join(own, ".git"), `gitdir: ${join(repoA, ".git")}\n`);
    const second = await rebuilt(b.headers, created.json.id);
    expect(second.status).toBe("BUILD_FAILED");
    expect(second.error).toMatch(GIT_OUTSIDE);
  });
});
