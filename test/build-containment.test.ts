import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, inject, it } from "vitest";
import { newWorkspace, waitFor } from "../harness/export.ts";
import { type Files, gitRepo, graphRepoFiles } from "../harness/repos.ts";
import { call } from "./helpers/cloud.ts";

// Issue 25, break-outs 2 and 4: what a hostile repository tries in the revision build, deployed through
// /v2/deployments of a workspace of its own on the shared local cloud.
const V2 = "/v2/deployments";
const FINAL = ["DEPLOYED", "BUILD_FAILED", "DEPLOY_FAILED", "CREATE_FAILED", "INTERRUPTED"];
const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

function repo(files: Files) {
  const r = gitRepo(files);
  cleanups.push(r.remove);
  return r.dir;
}

function scratchDir(label: string) {
  const dir = mkdtempSync(join(tmpdir(), label));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function deploy(headers: Record<string, string>, repoUrl: string) {
  return call("POST", V2, {
    headers,
    body: {
      name: `hostile-${crypto.randomUUID().slice(0, 8)}`,
      source: "github",
      source_config: { repo_url: repoUrl, deployment_type: "dev", build_on_push: false },
      source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
    },
  });
}

/** Deploys `repoUrl` and waits for its first revision to end; returns it and its build log. */
async function built(headers: Record<string, string>, repoUrl: string) {
  const created = await deploy(headers, repoUrl);
  expect(created.status).toBe(201);
  const { id, latest_revision_id: rev } = created.json;
  const revision = await waitFor(
    "the revision to end",
    async () => {
      const r = await call("GET", `${V2}/${id}/revisions/${rev}`, { headers });
      return FINAL.includes(r.json?.status) ? r.json : undefined;
    },
    90_000,
    200,
  );
  const logs = await call("GET", `${V2}/${id}/revisions/${rev}/logs`, { headers });
  return { revision, log: logs.json.build_log as string };
}

const GRAPH: Files = {
  "langgraph.json": JSON.stringify({ graphs: { agent: "./graph.mjs:graph" } }),
  "graph.mjs": "export const graph = {};\n",
};

describe("builds: a repository's .npmrc", () => {
  it("git=./pwn.sh with a git+ dependency runs no script; the build log names the dropped setting", async () => {
    const { headers } = await newWorkspace();
    const out = scratchDir("npmrc-attack-");
    const marker = join(out, "pwned");
    const dep = repo({ "package.json": '{"name": "d", "version": "1.0.0"}' });
    const dir = repo({
      ...GRAPH,
      ".npmrc": "git=./pwn.sh\n",
      "pwn.sh": `#!/bin/sh\nenv > ${marker}\nexec git "$@"\n`,
      "package.json": JSON.stringify({ name: "x", dependencies: { d: `git+file://${dep}` } }),
    });
    chmodSync(join(dir, "pwn.sh"), 0o755);
    const { log } = await built(headers, dir);
    expect(existsSync(marker)).toBe(false);
    expect(log).toContain('npmrc setting dropped: .npmrc: "git"');
  });

  it("a repository with an .npmrc builds: the file is set aside inside the sandbox, its allowed settings used", async () => {
    const { headers } = await newWorkspace();
    const dir = repo({
      ...GRAPH,
      ".npmrc": "registry=https://registry.npmjs.org/\nfund=false\n",
      "package.json": JSON.stringify({ name: "x", version: "1.0.0", dependencies: {} }),
    });
    const { revision, log } = await built(headers, dir);
    expect(log).not.toMatch(/EXDEV/);
    expect(revision.status).not.toBe("BUILD_FAILED");
    expect(log).toContain("Build succeeded");
    expect(log).toContain('npmrc setting dropped: .npmrc: "fund"');
  });
});

describe("builds: symlinks in the repository", () => {
  it("a package.json linked to a host file fails the build naming the link; the log holds none of the file", async () => {
    const { headers } = await newWorkspace();
    const host = join(scratchDir("host-file-"), "secret.json");
    const content = "HOST-FILE-CONTENT-4a1f";
    writeFileSync(host, `{"name": "${content}"`);
    const dir = repo(GRAPH);
    symlinkSync(host, join(dir, "package.json"));
    execFileSync("git", ["-C", dir, "add", "-A"]);
    execFileSync("git", ["-C", dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "link"]);
    const { revision, log } = await built(headers, dir);
    expect(revision.status).toBe("BUILD_FAILED");
    expect(revision.error).toBe("package.json is a symlink that points outside the repository");
    expect(log).toContain("package.json is a symlink that points outside the repository");
    expect(log).not.toContain(content);
  });
});

describe("builds: local repo_url paths", () => {
  const refused = async (repoUrl: string, msg: RegExp) => {
    const { headers } = await newWorkspace();
    const r = await deploy(headers, repoUrl);
    expect(r.status).toBe(422);
    const issue = r.json.detail.find(
      (d: { loc: string[] }) => d.loc.join(".") === "body.source_config.repo_url",
    );
    expect(issue?.msg).toMatch(msg);
  };

  it("the platform's data folder is refused (as a path, a file:// URL, or a folder inside it)", async () => {
    const dataDir = inject("dataDir");
    for (const url of [dataDir, pathToFileURL(dataDir).href, join(dataDir, "s3")])
      await refused(url, /data folder \(DATA_DIR\)/);
  });

  it("a folder outside the folders the operator granted the workspace is refused", async () => {
    await refused("/etc", /granted this workspace \(npm run grant-folder\)/);
  });

  it("a folder under a granted one, outside the data folder, builds", async () => {
    const { headers } = await newWorkspace();
    const { revision } = await built(headers, repo(graphRepoFiles(["a"])));
    expect(revision.status).toBe("DEPLOYED");
  });
});
