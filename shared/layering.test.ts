import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";
import {
  adjacency,
  arrowsWithin,
  folderUnder,
  importGraph,
  importsOf,
  stronglyConnected,
} from "../test/helpers/import-graph.ts";

// The layering rules of docs/architecture.md's Layout, checked over the source (tests and benchmarks aside): no folder
// imports a folder that imports it back (directly or round a longer loop), and shared/ never imports the
// handlers or the infrastructure above it. A folder is shared/<name>, functions/<name> or infra/<name>; the
// files directly in shared/ are the base modules.
const ROOT = join(dirname(new URL(import.meta.url).pathname), "..");

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" ? [] : sourceFiles(path);
    return /\.ts$/.test(e.name) && !/\.(test|bench)\.ts$/.test(e.name) ? [path] : [];
  });
}

function folderOf(path: string): string {
  const parts = path.split("/");
  if (parts.length <= 2) return parts[0] === "shared" ? "shared (base)" : parts[0];
  return `${parts[0]}/${parts[1]}`;
}

/** folder → folders it imports, each with one import that shows it. */
function folderImports(): Map<string, Map<string, string>> {
  const edges = new Map<string, Map<string, string>>();
  for (const file of ["shared", "functions", "infra"].flatMap(sourceFiles)) {
    const text = readFileSync(join(ROOT, file), "utf8");
    // functions/modules/ are loader tables: their import()s load handlers at run time (the OpenAPI handlers read
    // them to document every route, themselves included), which is no layer's dependency.
    const pattern = file.startsWith("functions/modules/")
      ? /from\s*"(\.{1,2}\/[^"]+)"/g
      : /(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g;
    for (const m of text.matchAll(pattern)) {
      const target = relative(ROOT, normalize(join(ROOT, dirname(file), m[1])));
      const [a, b] = [folderOf(file), folderOf(target)];
      if (a === b) continue;
      if (!edges.has(a)) edges.set(a, new Map());
      if (!edges.get(a)!.has(b)) edges.get(a)!.set(b, `${file} → ${target}`);
    }
  }
  return edges;
}

/** The strongly connected components with more than one folder (Tarjan). */
function cycles(edges: Map<string, Map<string, string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      for (let w = stack.pop()!; ; w = stack.pop()!) {
        component.push(w);
        if (w === v) break;
      }
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return out;
}

/** file → the files it imports (relative imports only), for the rules that are finer than folders. */
function fileImports(dir: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of sourceFiles(dir)) {
    const text = readFileSync(join(ROOT, file), "utf8");
    const targets = [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((m) =>
      relative(ROOT, normalize(join(ROOT, dirname(file), m[1]))),
    );
    out.set(file, targets);
  }
  return out;
}

// The agent server's handlers reach its storage through the operations layer only (shared/agent/ops: each
// operation takes the caller, looks the deployment up and authorizes before it reads or writes). The entry points
// that host a runtime or route to one, or build the platform's agent server with its host (not route handlers),
// may also use the hosting modules.
const AGENT_ENTRY_POINTS = [
  "functions/agent/router.ts",
  "functions/agent/runtime.ts",
  "functions/agent/own-origin.ts",
  "functions/agent/platform.ts",
];
const HOSTING = [/^shared\/agent\/runtime\//, /^shared\/agent\/hosting\//, /^shared\/agent\/edge\//];
/** The operations layer, and the protocols (MCP, A2A) built on it as handlers are. */
const ABOVE_STORAGE = ["shared/agent/ops/", "shared/agent/protocols/"];

/** Imports of shared/agent from functions/agent that pass the operations layer by. */
function pastOperations(imports: Map<string, string[]>): string[] {
  return [...imports].flatMap(([file, targets]) =>
    targets
      .filter((t) => t.startsWith("shared/agent/") && !ABOVE_STORAGE.some((a) => t.startsWith(a)))
      .filter((t) => !(AGENT_ENTRY_POINTS.includes(file) && HOSTING.some((h) => h.test(t))))
      .map((t) => `${file} → ${t}`),
  );
}

describe("layering", () => {
  const edges = folderImports();

  it("finds the imports it checks", () => {
    expect(edges.get("functions/agent")?.has("shared/agent")).toBe(true);
    expect(edges.get("shared/control")?.has("shared/records")).toBe(true);
  });

  it("has no folder cycle", () => {
    const found = cycles(edges).map((c) =>
      c.flatMap((a) => c.filter((b) => edges.get(a)?.has(b)).map((b) => edges.get(a)!.get(b)!)),
    );
    expect(found).toEqual([]);
  });

  it("finds a cycle when there is one", () => {
    const made = new Map([
      ["a", new Map([["b", "a → b"]])],
      ["b", new Map([["c", "b → c"]])],
      ["c", new Map([["a", "c → a"]])],
    ]);
    expect(cycles(made)).toEqual([["a", "b", "c"]]);
  });

  it("shared/ imports neither functions/ nor infra/", () => {
    const up = [...edges]
      .filter(([a]) => a.startsWith("shared"))
      .flatMap(([, to]) => [...to].filter(([b]) => !b.startsWith("shared")).map(([, why]) => why));
    expect(up).toEqual([]);
  });

  it("functions/agent/** reaches shared/agent through the operations layer only", () => {
    const imports = fileImports("functions/agent");
    expect([...imports.values()].flat().some((t) => t.startsWith("shared/agent/ops/"))).toBe(true);
    expect(pastOperations(imports)).toEqual([]);
  });

  it("the cron tick reaches the agent server through its operations only (the platform's agent server)", () => {
    const tick = "functions/tasks/agent-cron-tick.ts";
    const imports = new Map([[tick, fileImports("functions/tasks").get(tick) ?? []]]);
    expect(imports.get(tick)).toContain("functions/agent/platform.ts");
    expect(pastOperations(imports)).toEqual([]);
  });

  it("code that runs inside a deployment (shared/agent/runtime) reaches no platform hosting or edge code", () => {
    const imports = fileImports("shared/agent/runtime");
    expect(imports.size).toBeGreaterThan(5);
    const hosting = [...imports].flatMap(([file, targets]) =>
      targets.filter((t) => /^shared\/agent\/(hosting|edge)\//.test(t)).map((t) => `${file} → ${t}`),
    );
    expect(hosting).toEqual([]);
  });

  it("finds a handler that passes the operations layer by", () => {
    const made = new Map([
      [
        "functions/agent/threads/get.ts",
        ["shared/agent/deployment/deployment.ts", "shared/agent/ops/index.ts"],
      ],
    ]);
    expect(pastOperations(made)).toEqual([
      "functions/agent/threads/get.ts → shared/agent/deployment/deployment.ts",
    ]);
  });

  it("no production module imports test/ or bench/ (test helpers live under test/)", () => {
    const intoTests = [...edges].flatMap(([, to]) =>
      [...to].filter(([b]) => /^(test|bench)\b/.test(b)).map(([, why]) => why),
    );
    expect(intoTests).toEqual([]);
  });
});

// shared/agent's folders by concern, in layers from the bottom up (docs/architecture.md says why each sits where
// it does). A folder imports only folders of layers below its own (`import type` counted: a type-only arrow makes
// no circle at load time but is a dependency all the same); folders of one layer do not import each other.
const AGENT_LAYERS: string[][] = [
  // the revision's artifact as its runtime reads it; custom auth's identity and filters; storage engines
  ["artifact", "auth", "checkpoint", "stream"],
  ["store"],
  // the deployment a request addresses: its scope, storage and the graphs it serves
  ["deployment"],
  ["assistants", "tracing"],
  // code that runs inside a deployment's runtime (serving it, loading its graphs, its Lambda protocol)
  ["runtime"],
  // platform code that starts and reaches runtimes; threads and their state; the UI bundles
  ["hosting", "threads", "ui"],
  ["runs"],
  ["crons"],
  // deleting what a deployment holds: a thread with its runs and crons, expired threads, a deleted deployment
  ["cleanup"],
  // the operations every handler calls: caller, lookup, authorization, then the act
  ["ops"],
  // MCP and A2A over the operations; the edge (who may call a deployment, its origin, its CORS) in front
  ["protocols", "edge"],
];

/** The layer of each shared/agent folder (`shared/agent/<name>`). */
const layerOf = new Map(
  AGENT_LAYERS.flatMap((names, i) => names.map((n) => [`shared/agent/${n}`, i] as const)),
);

/** Arrows between shared/agent folders that do not go down the layers: each as "from → to (type)". */
function againstLayers(
  arrows: { from: string; to: string; kind: string }[],
  layers: Map<string, number>,
): string[] {
  return arrows.flatMap((a) => {
    const [from, to] = [folderUnder("shared/agent", a.from), folderUnder("shared/agent", a.to)];
    if (!from || !to || from === to) return [];
    const [f, t] = [layers.get(from), layers.get(to)];
    return f !== undefined && t !== undefined && t < f
      ? []
      : [`${a.from} → ${a.to}${a.kind === "type" ? " (type)" : ""}`];
  });
}

describe("shared/agent's layers", () => {
  const arrows = importGraph(ROOT, ["shared", "functions", "infra"]);
  const agent = arrows.filter((a) => a.from.startsWith("shared/agent/") && a.to.startsWith("shared/agent/"));

  it("finds the arrows it checks, type-only ones too", () => {
    expect(agent.some((a) => a.kind === "runtime")).toBe(true);
    expect(agent.some((a) => a.kind === "type")).toBe(true);
  });

  it("tells type-only imports from those that load a module", () => {
    const text = [
      'import type { A } from "./a.ts";',
      'import { type B, type C } from "./b.ts";',
      "import {",
      "  type D,",
      "  e,",
      '} from "./d.ts";',
      'export type { F } from "./f.ts";',
      'export * from "./g.ts";',
      'import "./h.ts";',
      'const i = await import("./i.ts");',
      'type J = typeof import("./j.ts");',
      'import { k } from "node:fs";',
    ].join("\n");
    expect(importsOf(text)).toEqual([
      { specifier: "./a.ts", kind: "type" },
      { specifier: "./b.ts", kind: "type" },
      { specifier: "./d.ts", kind: "runtime" },
      { specifier: "./f.ts", kind: "type" },
      { specifier: "./g.ts", kind: "runtime" },
      { specifier: "./h.ts", kind: "runtime" },
      { specifier: "./i.ts", kind: "runtime" },
      { specifier: "./j.ts", kind: "type" },
    ]);
  });

  it("names every folder of shared/agent once, and no module sits at its top", () => {
    const entries = readdirSync(join(ROOT, "shared/agent"), { withFileTypes: true });
    const folders = entries.filter((e) => e.isDirectory()).map((e) => e.name);
    expect(AGENT_LAYERS.flat().sort()).toEqual(folders.sort());
    expect(entries.filter((e) => e.isFile() && /\.ts$/.test(e.name)).map((e) => e.name)).toEqual([]);
  });

  it("every import between its folders goes down the layers", () => {
    expect(againstLayers(agent, layerOf)).toEqual([]);
  });

  it("finds an import that runs back up, and one between folders of a layer", () => {
    const made = [
      { from: "shared/agent/ops/runs.ts", to: "shared/agent/runs/runs.ts", kind: "runtime" },
      { from: "shared/agent/runs/runs.ts", to: "shared/agent/ops/caller.ts", kind: "type" },
      { from: "shared/agent/threads/state.ts", to: "shared/agent/ui/ui.ts", kind: "runtime" },
    ];
    expect(againstLayers(made, layerOf)).toEqual([
      "shared/agent/runs/runs.ts → shared/agent/ops/caller.ts (type)",
      "shared/agent/threads/state.ts → shared/agent/ui/ui.ts",
    ]);
  });

  it("has no file circle, type imports counted", () => {
    const components = stronglyConnected(adjacency(agent));
    expect(components.map((c) => arrowsWithin(c, agent).map((a) => `${a.from} → ${a.to}`))).toEqual([]);
  });

  it("finds a file circle when there is one", () => {
    const made = [
      { from: "a.ts", to: "b.ts" },
      { from: "b.ts", to: "c.ts" },
      { from: "c.ts", to: "a.ts" },
      { from: "c.ts", to: "d.ts" },
    ];
    expect(stronglyConnected(adjacency(made))).toEqual([["a.ts", "b.ts", "c.ts"]]);
  });

  // Generic HTTP code imports no domain folder (as hono's cors() takes a function and never reads application
  // data): the edge reads a deployment once and hands what it decided (its CORS policy) in, and the functions layer
  // hands in the API-key check and rate limit (shared/auth). What shared/http may import besides the base modules:
  // the settings and request body decoding (shared/ingest: gzip, zstd, multipart).
  it("shared/http imports no domain folder", () => {
    const allowed = (to: string) =>
      /^shared\/[^/]+\.ts$/.test(to) || /^shared\/(http|config|ingest)\//.test(to);
    const out = arrows.filter((a) => a.from.startsWith("shared/http/") && !allowed(a.to));
    expect(arrows.some((a) => a.from.startsWith("shared/http/"))).toBe(true);
    expect(out.map((a) => `${a.from} → ${a.to}`)).toEqual([]);
  });
});

// The test harness (harness/: platforms started as `npm start` runs them, repositories, clients, stand-ins) is what
// test/ and bench/ share; neither imports the other, the harness imports neither, and no file under shared/ (its
// tests and micro-benchmarks included) reaches bench/ (unit tests may use test/helpers).
describe("the test harness", () => {
  const importsOf = (dir: string) =>
    walk(dir).flatMap((file) =>
      [...readFileSync(join(ROOT, file), "utf8").matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map(
        (m) => ({ file, target: relative(ROOT, normalize(join(ROOT, dirname(file), m[1]))) }),
      ),
    );
  const reaching = (dirs: string[], into: string[]) =>
    dirs
      .flatMap(importsOf)
      .filter(({ target }) => into.some((d) => target.startsWith(`${d}/`)))
      .map(({ file, target }) => `${file} → ${target}`);

  it("finds the imports it checks", () => {
    expect(reaching(["test"], ["harness"]).length).toBeGreaterThan(0);
    expect(reaching(["bench"], ["harness"]).length).toBeGreaterThan(0);
  });

  it("test/ and bench/ share the harness, not each other", () => {
    expect(reaching(["test"], ["bench"])).toEqual([]);
    expect(reaching(["bench"], ["test"])).toEqual([]);
  });

  it("the harness imports neither test/ nor bench/", () => {
    expect(reaching(["harness"], ["test", "bench"])).toEqual([]);
  });

  it("shared/ never imports bench/", () => {
    expect(reaching(["shared"], ["bench"])).toEqual([]);
  });
});

/** Every TypeScript file under `dir`, tests and benchmarks included. */
function walk(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" || e.name === "fixtures" ? [] : walk(path);
    return /\.(ts|mjs)$/.test(e.name) ? [path] : [];
  });
}
