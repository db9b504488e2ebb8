import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

// The static import graph of the repository's source: relative imports between its .ts/.mjs files, each arrow marked
// runtime (it loads the module) or type (erased by the compiler: `import type`, `export type`, an import of type
// specifiers only, `typeof import("…")`). A type arrow makes no load-time cycle but is still a dependency for layering.
// `node --import tsx test/helpers/import-graph.ts [prefix…]` prints the strongly connected components.

export type Kind = "runtime" | "type";
export interface Arrow {
  from: string;
  to: string;
  kind: Kind;
}

/** The source files under `dir` (relative to `root`), tests, fuzz tests and benchmarks left out. */
export function sourceFiles(root: string, dir: string): string[] {
  if (!existsSync(join(root, dir))) return [];
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory())
      return ["node_modules", "fixtures", "dist"].includes(e.name) ? [] : sourceFiles(root, path);
    return /\.(ts|mjs)$/.test(e.name) && !/\.(test|bench)\.ts$/.test(e.name) && !e.name.endsWith(".d.ts")
      ? [path]
      : [];
  });
}

// A declaration `import … from "x"` / `export … from "x"`: its clause never holds a quote or a semicolon, so the
// pattern cannot run across statements or strings.
const DECLARATION = /^[ \t]*(import|export)(\s+type\b)?\s*([^;"'`]*?)\s*from\s*["'](\.{1,2}\/[^"']+)["']/gm;
const SIDE_EFFECT = /^[ \t]*import\s*["'](\.{1,2}\/[^"']+)["']/gm;
const DYNAMIC = /(typeof\s+)?\bimport\s*\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

/** Whether a declaration's clause names types only (`{ type A, type B }`). */
function typeSpecifiersOnly(clause: string): boolean {
  const braces = clause.match(/^\{([^}]*)\}$/);
  if (!braces) return false;
  const names = braces[1]
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return names.length > 0 && names.every((n) => /^type\s/.test(n));
}

/** The relative imports of one file's text: specifier and kind. */
export function importsOf(text: string): { specifier: string; kind: Kind }[] {
  const out: { specifier: string; kind: Kind }[] = [];
  for (const m of text.matchAll(DECLARATION)) {
    const typeOnly = Boolean(m[2]) || typeSpecifiersOnly(m[3].trim());
    out.push({ specifier: m[4], kind: typeOnly ? "type" : "runtime" });
  }
  for (const m of text.matchAll(SIDE_EFFECT)) out.push({ specifier: m[1], kind: "runtime" });
  for (const m of text.matchAll(DYNAMIC)) out.push({ specifier: m[2], kind: m[1] ? "type" : "runtime" });
  return out;
}

/** The file a relative specifier names, or undefined when it names no source file (a .json, a template's text). */
function resolve(root: string, from: string, specifier: string): string | undefined {
  const base = normalize(join(dirname(from), specifier));
  for (const candidate of [base, base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts")]) {
    const full = join(root, candidate);
    if (/\.(ts|mjs)$/.test(candidate) && existsSync(full) && statSync(full).isFile()) return candidate;
  }
  return undefined;
}

/** Every arrow between the source files under `dirs` (and from them to any other source file of the repository). */
export function importGraph(root: string, dirs: string[]): Arrow[] {
  const arrows = new Map<string, Arrow>();
  for (const from of dirs.flatMap((d) => sourceFiles(root, d))) {
    for (const { specifier, kind } of importsOf(readFileSync(join(root, from), "utf8"))) {
      const to = resolve(root, from, specifier);
      if (!to || to === from) continue;
      const key = `${from}\0${to}`;
      // One arrow per pair of files: a runtime import of a file outweighs a type import of it.
      if (arrows.get(key)?.kind !== "runtime") arrows.set(key, { from, to, kind });
    }
  }
  return [...arrows.values()];
}

/** node → the nodes it points at. */
export function adjacency(arrows: { from: string; to: string }[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const { from, to } of arrows) {
    if (!out.has(from)) out.set(from, new Set());
    out.get(from)!.add(to);
  }
  return out;
}

/** The strongly connected components of more than one node (Tarjan, iterative), each sorted, largest first. */
export function stronglyConnected(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  for (const start of edges.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; next: Iterator<string> }[] = [];
    const enter = (node: string) => {
      index.set(node, index.size);
      low.set(node, index.get(node)!);
      stack.push(node);
      onStack.add(node);
      work.push({ node, next: (edges.get(node) ?? new Set<string>()).values() });
    };
    enter(start);
    while (work.length > 0) {
      const top = work[work.length - 1];
      const step = top.next.next();
      if (!step.done) {
        const w = step.value;
        if (!index.has(w)) enter(w);
        else if (onStack.has(w)) low.set(top.node, Math.min(low.get(top.node)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = [];
        for (let w = stack.pop()!; ; w = stack.pop()!) {
          onStack.delete(w);
          component.push(w);
          if (w === top.node) break;
        }
        if (component.length > 1) out.push(component.sort());
      }
    }
  }
  return out.sort((a, b) => b.length - a.length || a[0].localeCompare(b[0]));
}

/** The arrows inside one component, to show how it closes. */
export function arrowsWithin(component: string[], arrows: Arrow[]): Arrow[] {
  const members = new Set(component);
  return arrows.filter((a) => members.has(a.from) && members.has(a.to));
}

/** The folder a file of `prefix` belongs to: `prefix/<name>` for a file in a subfolder, `prefix` for one at its top. */
export function folderUnder(prefix: string, file: string): string | undefined {
  if (!file.startsWith(`${prefix}/`)) return undefined;
  const rest = file.slice(prefix.length + 1).split("/");
  return rest.length > 1 ? `${prefix}/${rest[0]}` : prefix;
}

function report(root: string, prefixes: string[]) {
  const arrows = importGraph(root, ["shared", "functions", "infra", "harness", "test", "bench"]);
  const within = (f: string) => prefixes.some((p) => f === p || f.startsWith(`${p}/`));
  const scoped = arrows.filter((a) => within(a.from) && within(a.to));
  const print = (title: string, components: string[][], shown: Arrow[]) => {
    const files = components.reduce((n, c) => n + c.length, 0);
    console.log(`${title}: ${components.length} component(s), ${files} node(s)`);
    for (const c of components) {
      console.log(`  [${c.length}] ${c.join(" ")}`);
      for (const a of arrowsWithin(c, shown))
        console.log(`      ${a.from} → ${a.to}${a.kind === "type" ? " (type)" : ""}`);
    }
  };
  const runtime = scoped.filter((a) => a.kind === "runtime");
  print("runtime file cycles", stronglyConnected(adjacency(runtime)), runtime);
  print("file cycles, type imports counted", stronglyConnected(adjacency(scoped)), scoped);
  for (const prefix of prefixes) {
    const folderArrows = scoped.flatMap((a) => {
      const [from, to] = [folderUnder(prefix, a.from), folderUnder(prefix, a.to)];
      return from && to && from !== to ? [{ from, to, kind: a.kind, why: `${a.from} → ${a.to}` }] : [];
    });
    const components = stronglyConnected(adjacency(folderArrows));
    console.log(`folder cycles under ${prefix}: ${components.length}`);
    for (const c of components) {
      console.log(`  [${c.length}] ${c.join(" ")}`);
      const members = new Set(c);
      for (const a of folderArrows.filter((x) => members.has(x.from) && members.has(x.to)))
        console.log(`      ${a.why}${a.kind === "type" ? " (type)" : ""}`);
    }
  }
}

if (process.argv[1] && normalize(process.argv[1]) === normalize(new URL(import.meta.url).pathname)) {
  const root = relative(process.cwd(), join(dirname(new URL(import.meta.url).pathname), "../.."));
  const prefixes = process.argv.slice(2);
  report(root || ".", prefixes.length > 0 ? prefixes : ["shared/agent"]);
}
