import { existsSync, readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { AGENT_ENTRY_POINTS, mountedRoutes, routeId, routes } from "./routes.ts";
import { tasks } from "./task-manifest.ts";

// The manifest is the only place a Lambda is declared: every handler module must be reachable from it, and
// everything it names must exist, or the CDK app would deploy a broken function or silently drop one.
const DIR = dirname(fileURLToPath(import.meta.url));
// The manifests, their module maps and loader, the toolkits (the platform's and the agent handlers'), every bundle's
// bootstrap, the router's table of the routes a deployment's own origin serves, and the agent server the platform's
// entry points build once (agent/platform.ts: the composition root of the cron tick and the run sweeper).
const NOT_HANDLERS = new Set([
  "routes.ts",
  "task-manifest.ts",
  "load.ts",
  "modules/routes.ts",
  "modules/tasks.ts",
  "modules/agent.ts",
  "modules/runtime.ts",
  "handler.ts",
  "bootstrap.ts",
  "agent/own-origin.ts",
  "agent/handler.ts",
  "agent/platform.ts",
]);

function handlerModules(dir = DIR): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return handlerModules(path);
    if (!e.name.endsWith(".ts") || e.name.endsWith(".test.ts")) return [];
    const rel = relative(DIR, path).replaceAll("\\", "/");
    return NOT_HANDLERS.has(rel) ? [] : [rel.slice(0, -".ts".length)];
  });
}

describe("function manifest", () => {
  const referenced = new Set([
    ...routes.map((r) => r.handler),
    ...tasks.map((t) => t.handler),
    ...Object.values(AGENT_ENTRY_POINTS),
  ]);

  it("references every handler module under functions/", () => {
    const orphans = handlerModules().filter((h) => !referenced.has(h));
    expect(
      orphans,
      "modules under functions/ that no route or task uses (helpers belong in shared/)",
    ).toEqual([]);
  });

  it("points only at modules that exist", () => {
    const missing = [...referenced].filter((h) => !existsSync(join(DIR, `${h}.ts`)));
    expect(
      missing,
      "handlers named in routes.ts / task-manifest.ts without a functions/<handler>.ts",
    ).toEqual([]);
  });

  it("gives every route its own function and every path one route", () => {
    const dupes = (xs: string[]) => xs.filter((x, i) => xs.indexOf(x) !== i);
    expect(dupes(routes.map(routeId)), "routes sharing a handler (one Lambda per route)").toEqual([]);
    expect(dupes(mountedRoutes().map((m) => m.routeKey)), "duplicate route keys").toEqual([]);
    expect(dupes(tasks.map((t) => t.name)), "duplicate task names").toEqual([]);
  });
});
