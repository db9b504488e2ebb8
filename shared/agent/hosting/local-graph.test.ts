import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { graphConfigArg, nodeModulesAbove } from "./local-graph.ts";

const roots: string[] = [];
afterAll(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))));

describe("--graph", () => {
  it("finds a monorepo's node_modules above the graph's folder, as Node resolves packages", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "mono-"));
    roots.push(root);
    const agent = path.join(root, "packages", "agent");
    await mkdir(agent, { recursive: true });
    await mkdir(path.join(root, "node_modules"));
    expect(await nodeModulesAbove(agent)).toBe(path.join(root, "node_modules"));
    await mkdir(path.join(agent, "node_modules"));
    expect(await nodeModulesAbove(agent)).toBe(path.join(agent, "node_modules"));
  });

  it("takes the config path from --graph, --graph= or AGENT_GRAPH_CONFIG", () => {
    expect(graphConfigArg(["--graph", "a/langgraph.json"], {})).toBe("a/langgraph.json");
    expect(graphConfigArg(["--graph=b.json"], {})).toBe("b.json");
    expect(graphConfigArg([], { AGENT_GRAPH_CONFIG: "c.json" })).toBe("c.json");
    expect(graphConfigArg([], {})).toBeUndefined();
  });
});
