import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { BuildError } from "../errors.ts";
import { bundleGraphs, installDependencies } from "./bundle.ts";
import { tenantCacheDir } from "./dep-cache.ts";
import { readGraphConfig } from "./graph-config.ts";

let tmp: string;
let n = 0;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "bundle-test-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});
afterEach(() => {
  vi.unstubAllEnvs();
});

/** Writes a repository from a map of files; returns its directory. */
async function repoOf(files: Record<string, string>): Promise<string> {
  const dir = path.join(tmp, `repo-${++n}`);
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), text);
  }
  return dir;
}

async function build(repo: string, configPath = "langgraph.json") {
  const lines: string[] = [];
  const log = (l: string) => lines.push(l);
  const { config, configDir } = await readGraphConfig(repo, configPath);
  const outDir = path.join(tmp, `out-${++n}`);
  const manifest = await bundleGraphs({ repoDir: repo, configDir, config, outDir, log });
  return { manifest, outDir, lines };
}

const LANGGRAPH_GRAPH = `
import { MessagesAnnotation, StateGraph, START, END } from "@langchain/langgraph";
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("hello", () => ({}))
  .addEdge(START, "hello")
  .addEdge("hello", END)
  .compile();
`;

describe("bundling graphs", () => {
  it("a repository with only a graph file bundles against the platform's packages", async () => {
    const repo = await repoOf({
      "langgraph.json": JSON.stringify({
        graphs: { hello: "./src/graph.ts:graph" },
        description: { hello: "says hello" },
        node_version: "22",
      }),
      "src/graph.ts": LANGGRAPH_GRAPH,
    });
    const { manifest, outDir, lines } = await build(repo);
    expect(manifest.graphs).toEqual({
      hello: { file: "graphs/hello.mjs", export_name: "graph", description: "says hello" },
    });
    expect(manifest.node_version).toBe("22");
    expect(JSON.parse(await readFile(path.join(outDir, "manifest.json"), "utf8"))).toEqual(manifest);
    expect(lines.join("\n")).toMatch(/platform's packages/);
    const mod = await import(pathToFileURL(path.join(outDir, "graphs", "hello.mjs")).href);
    expect(Object.keys(mod.graph.getGraph().nodes)).toContain("hello");
  });

  it("a graph id that is no file name (the reference takes any string) bundles under a name of its hash", async () => {
    const repo = await repoOf({
      "langgraph.json": JSON.stringify({ graphs: { "my agent/v2": "./src/graph.ts:graph" } }),
      "src/graph.ts": LANGGRAPH_GRAPH,
    });
    const { manifest, outDir } = await build(repo);
    const file = manifest.graphs["my agent/v2"]?.file;
    expect(file).toMatch(/^graphs\/_[0-9a-f]{16}\.mjs$/);
    const mod = await import(pathToFileURL(path.join(outDir, file!)).href);
    expect(Object.keys(mod.graph.getGraph().nodes)).toContain("hello");
  });

  it("a syntax error is a BuildError naming file:line", async () => {
    const repo = await repoOf({
      "langgraph.json": '{"graphs": {"bad": "./src/bad.ts:graph"}}',
      "src/bad.ts": "export const ok = 1;\nexport const graph = {;\n",
    });
    const err = await build(repo).catch((e) => e);
    expect(err).toBeInstanceOf(BuildError);
    expect(err.message).toMatch(/^bundling failed:\nsrc\/bad\.ts:2:\d+: /);
  });

  it("a missing graph file is a BuildError naming the graph", async () => {
    const repo = await repoOf({ "langgraph.json": '{"graphs": {"g": "./src/none.ts:graph"}}' });
    await expect(build(repo)).rejects.toThrow(new BuildError("graph g: ./src/none.ts not found"));
  });

  it("CommonJS dependencies get require/__dirname/__filename, and a module's own __dirname does not clash", async () => {
    const repo = await repoOf({
      "langgraph.json": '{"graphs": {"g": "./g.mjs:graph"}}',
      "g.mjs": [
        'import path from "node:path";',
        'import { fileURLToPath } from "node:url";',
        'import info from "./lib/info.cjs";',
        "const __dirname = path.dirname(fileURLToPath(import.meta.url));",
        "export const graph = { info, mine: __dirname };",
      ].join("\n"),
      "lib/info.cjs": 'module.exports = { dir: __dirname, file: __filename, sep: require("node:path").sep };',
    });
    const { outDir } = await build(repo);
    const mod = await import(pathToFileURL(path.join(outDir, "graphs", "g.mjs")).href);
    expect(mod.graph.info).toEqual({
      dir: path.join(outDir, "graphs"),
      file: path.join(outDir, "graphs", "g.mjs"),
      sep: "/",
    });
    expect(mod.graph.mine).toBe(path.join(outDir, "graphs"));
  });

  it("an import that is a symlink out of the repository is refused", async () => {
    const outside = path.join(tmp, "outside.txt");
    await writeFile(outside, "build machine secret");
    const repo = await repoOf({
      "langgraph.json": '{"graphs": {"g": "./g.ts:graph"}}',
      "g.ts": 'import text from "./notes.txt";\nexport const graph = text;',
    });
    await symlink(outside, path.join(repo, "notes.txt"));
    await expect(build(repo)).rejects.toThrow(/outside the repository/);
  });

  it("a graph folder inside another package resolves that package's node_modules as Node does; its own source outside the folder stays refused", async () => {
    const parent = await repoOf({
      "package.json": '{"name": "outer", "private": true}',
      "node_modules/parent-dep/package.json": '{"name": "parent-dep", "main": "index.js"}',
      "node_modules/parent-dep/index.js": 'exports.from = "the parent package";',
      "shared.ts": 'export const from = "a source file above the graph folder";',
      "graphs/langgraph.json": '{"graphs": {"g": "./g.ts:graph"}}',
      "graphs/g.ts": 'import { from } from "parent-dep";\nexport const graph = { from };',
    });
    const { outDir } = await build(path.join(parent, "graphs"));
    const mod = await import(pathToFileURL(path.join(outDir, "graphs", "g.mjs")).href);
    expect(mod.graph).toEqual({ from: "the parent package" });

    await writeFile(
      path.join(parent, "graphs", "g.ts"),
      'import { from } from "../shared.ts";\nexport const graph = { from };',
    );
    await expect(build(path.join(parent, "graphs"))).rejects.toThrow(
      /\.\.\/shared\.ts is outside the repository/,
    );
  });

  it("env comes from the config object, or from the .env file it names (skipped when absent)", async () => {
    const withFile = await repoOf({
      "langgraph.json": '{"graphs": {"g": "./g.ts:graph"}, "env": ".env"}',
      "g.ts": "export const graph = 1;",
      ".env": '# comment\nexport A=1\nB="two\\nlines"\nC=three # trailing\n',
    });
    expect((await build(withFile)).manifest.env).toEqual({ A: "1", B: "two\nlines", C: "three" });
    const absent = await repoOf({
      "langgraph.json": '{"graphs": {"g": "./g.ts:graph"}, "env": ".env"}',
      "g.ts": "export const graph = 1;",
    });
    const r = await build(absent);
    expect(r.manifest.env).toEqual({});
    expect(r.lines.join("\n")).toMatch(/env file \.env not found/);
    const inline = await repoOf({
      "langgraph.json": '{"graphs": {"g": "./g.ts:graph"}, "env": {"MODEL": "x"}}',
      "g.ts": "export const graph = 1;",
    });
    expect((await build(inline)).manifest.env).toEqual({ MODEL: "x" });
  });
});

describe("a repository with its own package.json", () => {
  /** A repository depending on a local package, so npm needs no registry. */
  const ownRepo = () =>
    repoOf({
      "langgraph.json": '{"graphs": {"g": "./src/graph.ts:graph"}, "dependencies": ["."]}',
      "package.json": JSON.stringify({
        name: "fixture",
        private: true,
        type: "module",
        dependencies: { greet: "file:./vendor/greet" },
      }),
      "vendor/greet/package.json": JSON.stringify({ name: "greet", version: "1.0.0", main: "index.js" }),
      "vendor/greet/index.js": 'exports.greet = (who) => "hello " + who;',
      "src/graph.ts": 'import { greet } from "greet";\nexport const graph = { greeting: greet("world") };\n',
    });

  it("installs its dependencies and bundles them", async () => {
    const repo = await ownRepo();
    const lines: string[] = [];
    await installDependencies(repo, (l) => lines.push(l));
    expect(lines.join("\n")).toMatch(
      /npm install --no-audit --no-fund --prefer-offline --omit=dev --ignore-scripts/,
    );
    const { outDir } = await build(repo);
    const mod = await import(pathToFileURL(path.join(outDir, "graphs", "g.mjs")).href);
    expect(mod.graph.greeting).toBe("hello world");
  });

  it("imports resolve from the repository only, not from the platform's packages", async () => {
    const repo = await repoOf({
      "langgraph.json": '{"graphs": {"g": "./g.ts:graph"}}',
      "package.json": '{"name": "x", "private": true}',
      "g.ts": LANGGRAPH_GRAPH,
    });
    await expect(build(repo)).rejects.toThrow(/Could not resolve "@langchain\/langgraph"/);
  });

  it("a failing install is a BuildError with the tail of npm's output", async () => {
    const repo = await repoOf({ "package.json": '{"name": "x", "dependencies": {' });
    const err = await installDependencies(repo, () => {}).catch((e) => e);
    expect(err).toBeInstanceOf(BuildError);
    expect(err.message).toMatch(/^npm install failed \(exit code \d+\):\n/);
    expect(err.message.split("\n").length).toBeGreaterThan(1);
  });

  it("with BUILD_CACHE_DIR, a second build of the workspace restores node_modules without npm", async () => {
    vi.stubEnv("BUILD_CACHE_DIR", path.join(tmp, "cache"));
    const first = await ownRepo();
    const firstLog: string[] = [];
    await installDependencies(first, (l) => firstLog.push(l), { cacheDir: tenantCacheDir("workspace-a") });
    expect(firstLog.some((l) => l.startsWith("npm install"))).toBe(true);

    const other = await ownRepo();
    const otherLog: string[] = [];
    await installDependencies(other, (l) => otherLog.push(l), { cacheDir: tenantCacheDir("workspace-b") });
    expect(otherLog.some((l) => l.startsWith("npm install"))).toBe(true);

    const second = await ownRepo();
    const secondLog: string[] = [];
    await installDependencies(second, (l) => secondLog.push(l), { cacheDir: tenantCacheDir("workspace-a") });
    expect(secondLog.filter((l) => l.startsWith("npm"))).toEqual([]);
    expect(secondLog.join("\n")).toMatch(/restored from the build cache/);
    expect(existsSync(path.join(second, "node_modules", "greet", "index.js"))).toBe(true);
    const { outDir } = await build(second);
    const mod = await import(pathToFileURL(path.join(outDir, "graphs", "g.mjs")).href);
    expect(mod.graph.greeting).toBe("hello world");
  });

  it("a .npmrc's git=./pwn.sh with a git+ dependency runs nothing; the log names the dropped setting", async () => {
    const marker = path.join(tmp, `pwned-${++n}`);
    const dep = await repoOf({ "package.json": '{"name": "d", "version": "1.0.0"}' });
    execFileSync("git", ["init", "-q", "-b", "main", dep]);
    execFileSync("git", ["-C", dep, "add", "-A"]);
    execFileSync("git", ["-C", dep, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "d"]);
    const repo = await repoOf({
      ".npmrc": "git=./pwn.sh\n",
      "pwn.sh": `#!/bin/sh\necho "$HOME $PLATFORM_API_KEY" > ${marker}\nexec git "$@"\n`,
      "package.json": JSON.stringify({ name: "x", dependencies: { d: `git+file://${dep}` } }),
    });
    await chmod(path.join(repo, "pwn.sh"), 0o755);
    const lines: string[] = [];
    await installDependencies(repo, (l) => lines.push(l)).catch(() => {});
    expect(existsSync(marker)).toBe(false);
    expect(lines).toContain(
      'npmrc setting dropped: .npmrc: "git" — only registry, @scope:registry and //host/:_authToken are used',
    );
    expect(await readFile(path.join(repo, ".npmrc"), "utf8")).toBe("git=./pwn.sh\n");
  });

  it("no package.json: nothing to install", async () => {
    const repo = await repoOf({ "g.ts": "export const graph = 1;" });
    const lines: string[] = [];
    await installDependencies(repo, (l) => lines.push(l));
    expect(lines).toEqual(["no package.json: graphs are bundled against the platform's own packages"]);
  });
});
