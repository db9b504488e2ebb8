import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ModuleMap } from "../load.ts";
import { routes, servedByRuntime } from "../routes.ts";
import { tasks } from "../task-manifest.ts";
import { agentModules } from "./agent.ts";
import { routeModules } from "./routes.ts";
import { runtimeModules } from "./runtime.ts";
import { taskModules } from "./tasks.ts";

// The module maps are what a bundle carries; the manifests are what is deployed. They name the same handlers,
// and each name loads its own file, or a route would 500 in AWS (missing) or bundle a handler it never serves.
const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();
const DIR = join(import.meta.dirname, "..");

async function loadsItsOwnFile(modules: ModuleMap): Promise<string[]> {
  const wrong: string[] = [];
  for (const [name, load] of Object.entries(modules)) {
    const mod = (await load()) as { handler?: unknown };
    const own = (await import(join(DIR, `${name}.ts`))) as { handler?: unknown };
    if (mod.handler === undefined || mod.handler !== own.handler) wrong.push(name);
  }
  return wrong;
}

describe("handler module maps", () => {
  it("routeModules names every route's handler and nothing else", () => {
    expect(sorted(Object.keys(routeModules))).toEqual(sorted(routes.map((r) => r.handler)));
  });

  it("agentModules names every agent-server route's handler and nothing else", () => {
    expect(sorted(Object.keys(agentModules))).toEqual(
      sorted(routes.filter((r) => r.group === "agent").map((r) => r.handler)),
    );
  });

  it("runtimeModules names exactly the routes a deployment's runtime serves", () => {
    expect(sorted(Object.keys(runtimeModules))).toEqual(
      sorted(routes.filter(servedByRuntime).map((r) => r.handler)),
    );
  });

  it("taskModules names every task's handler and nothing else", () => {
    expect(sorted(Object.keys(taskModules))).toEqual(sorted(tasks.map((t) => t.handler)));
  });

  it("every name loads functions/<name>.ts", { timeout: 60_000 }, async () => {
    expect(await loadsItsOwnFile(routeModules)).toEqual([]);
    expect(await loadsItsOwnFile(taskModules)).toEqual([]);
  });
});
