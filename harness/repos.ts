import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { grantFolder } from "../shared/control/repo-grants.ts";

// Git repositories of LangGraph.js agents for deployment tests, made in temp folders with the git CLI.
export type Files = Record<string, string>;

/** Test repositories are made in the temp folder, examples/ sits in the checkout: granted as an operator does. */
export async function grantTestFolders(tenant: string): Promise<void> {
  await grantFolder(tenant, tmpdir());
  await grantFolder(tenant, process.cwd());
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    stdio: "pipe",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
    },
  })
    .toString()
    .trim();

function write(dir: string, files: Files) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/**
 * A repository whose `main` holds `files` (over a copy of the folder `opts.from`, its node_modules left out);
 * each entry of `branches` is a branch off main with more files. Made in a new folder under `opts.parent`.
 */
export function gitRepo(
  files: Files,
  branches: Record<string, Files> = {},
  opts: { from?: string; parent?: string } = {},
): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(opts.parent ?? tmpdir(), "agent-repo-"));
  git(dir, "init", "-q", "-b", "main");
  if (opts.from) cpSync(opts.from, dir, { recursive: true, filter: (src) => !src.includes("node_modules") });
  write(dir, files);
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "first");
  for (const [branch, more] of Object.entries(branches)) {
    git(dir, "checkout", "-q", "-b", branch, "main");
    write(dir, more);
    git(dir, "add", "-A");
    git(dir, "commit", "-q", "-m", branch);
  }
  git(dir, "checkout", "-q", "main");
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A one-graph langgraph.json and a graph module whose nodes run in sequence. */
export function graphRepoFiles(nodes: string[], opts: { prelude?: string; graphId?: string } = {}): Files {
  const id = opts.graphId ?? "agent";
  const chain = nodes.map(
    (n) => `.addNode(${JSON.stringify(n)}, (s) => ({ text: s.text + ${JSON.stringify(`>${n}`)} }))`,
  );
  const edges = ["START", ...nodes.map((n) => JSON.stringify(n)), "END"]
    .slice(1)
    .map((to, i) => `.addEdge(${i === 0 ? "START" : JSON.stringify(nodes[i - 1])}, ${to})`);
  return {
    "langgraph.json": JSON.stringify({ graphs: { [id]: "./src/graph.mjs:graph" }, env: {} }, null, 2),
    "src/graph.mjs": [
      `import { Annotation, END, START, StateGraph } from "@langchain/langgraph";`,
      opts.prelude ?? "",
      `const State = Annotation.Root({ text: Annotation() });`,
      `export const graph = new StateGraph(State)${chain.join("")}${edges.join("")}.compile();`,
      "",
    ].join("\n"),
  };
}

/** A one-node graph with a custom HTTP app (src/app.mjs) and, when given, custom auth (src/auth.mjs). */
export function appRepoFiles(files: { app: string; auth?: string }): Files {
  return {
    ...graphRepoFiles(["a"]),
    "langgraph.json": JSON.stringify({
      graphs: { agent: "./src/graph.mjs:graph" },
      ...(files.auth === undefined ? {} : { auth: { path: "./src/auth.mjs:auth" } }),
      http: { app: "./src/app.mjs:app" },
    }),
    ...(files.auth === undefined ? {} : { "src/auth.mjs": files.auth }),
    "src/app.mjs": files.app,
  };
}

/** Deploys a repository through /v2/deployments and waits until its first revision is DEPLOYED. */
export async function deployRepo(
  repoDir: string,
  namePrefix: string,
  call: (
    method: string,
    path: string,
    init: { headers?: Record<string, string>; body?: unknown },
  ) => Promise<any>,
  headers: Record<string, string>,
  secrets: { name: string; value: string }[] = [],
): Promise<{ deploymentId: string; revisionId: string }> {
  const created = await call("POST", "/v2/deployments", {
    headers,
    body: {
      secrets,
      name: `${namePrefix}-${crypto.randomUUID().slice(0, 8)}`,
      source: "github",
      source_config: { repo_url: repoDir, deployment_type: "dev", build_on_push: false },
      source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
    },
  });
  if (created.status !== 201) throw new Error(`create answered ${created.status}: ${created.text}`);
  const { id, latest_revision_id } = created.json;
  const until = Date.now() + 120_000;
  for (;;) {
    const r = await call("GET", `/v2/deployments/${id}/revisions/${latest_revision_id}`, { headers });
    if (r.json?.status === "DEPLOYED") return { deploymentId: id, revisionId: latest_revision_id };
    if (/FAILED|INTERRUPTED/.test(r.json?.status ?? ""))
      throw new Error(`revision ${r.json.status}: ${r.json.error}`);
    if (Date.now() > until) throw new Error("the revision did not deploy within 120 s");
    await new Promise((res) => setTimeout(res, 200));
  }
}
