import { chmod, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { bundleGraphs, installDependencies } from "./bundle.ts";
import { tenantCacheDir } from "./dep-cache.ts";
import { readGraphConfig } from "./graph-config.ts";
import { smokeTestGraphs } from "./smoke.ts";
import { fetchSource } from "./source.ts";

// The README quickstart's agent goes through the whole build step as a revision would: copied without its
// node_modules, installed from its lockfile (its own @langchain/langgraph, not the platform's), bundled,
// smoke-tested, then invoked from the bundle.
const EXAMPLE = fileURLToPath(new URL("../../examples/agent", import.meta.url));

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "example-agent-test-"));
  // Readable like the platform's artifact folders: a root platform's sandbox runs as a uid of its own.
  await chmod(tmp, 0o755);
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});
afterEach(() => {
  vi.unstubAllEnvs();
});

async function buildExample(name: string) {
  const lines: string[] = [];
  const log = (l: string) => lines.push(l);
  const src = path.join(tmp, name, "src");
  const out = path.join(tmp, name, "out");
  await fetchSource({ repoUrl: EXAMPLE, dest: src, allowLocal: true, localRoots: [EXAMPLE], log });
  const { config, configDir } = await readGraphConfig(src, "langgraph.json");
  await installDependencies(configDir, log, { cacheDir: tenantCacheDir("example-workspace") });
  const manifest = await bundleGraphs({ repoDir: src, configDir, config, outDir: out, log });
  const graphs = await smokeTestGraphs({ artifactDir: out, manifest, env: {} });
  return { lines, out, manifest, graphs };
}

describe("examples/agent", () => {
  it("installs, bundles, smoke-tests, and answers with the tool's result; a rebuild hits the cache", {
    timeout: 240_000,
  }, async () => {
    vi.stubEnv("BUILD_CACHE_DIR", path.join(tmp, "cache"));
    const first = await buildExample("first");
    expect(first.lines.some((l) => l.startsWith("npm ci "))).toBe(true);
    expect(first.manifest.graphs.agent).toMatchObject({ file: "graphs/agent.mjs", export_name: "graph" });
    expect(first.manifest.graphs.agent!.description).toMatch(/weather/);
    expect(first.graphs).toEqual([
      { graph_id: "agent", export_name: "graph", nodes: ["agent", "tools"] },
      { graph_id: "agent_with_approval", export_name: "graph", nodes: ["agent", "approval", "tools"] },
    ]);

    const { graph } = await import(pathToFileURL(path.join(first.out, "graphs", "agent.mjs")).href);
    const result = await graph.invoke({ messages: [{ role: "user", content: "weather in Paris?" }] });
    const messages = result.messages as { content: unknown; tool_calls?: { name: string }[] }[];
    expect(messages[1]!.tool_calls?.[0]?.name).toBe("get_weather");
    expect(messages.at(-1)!.content).toBe("Here is the weather: It is 21°C and sunny in Paris.");

    const second = await buildExample("second");
    expect(second.lines.some((l) => l.startsWith("npm"))).toBe(false);
    expect(second.lines.join("\n")).toMatch(/restored from the build cache/);
    expect(second.graphs).toEqual(first.graphs);
  });
});
