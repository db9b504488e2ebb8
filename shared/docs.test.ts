import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

// The README and docs/ name files, folders, npm scripts, benchmarks and `npm start` flags: each must exist, so a
// rename or a deletion fails here instead of leaving a newcomer with a dead path. Generated paths (.gitignore's)
// are not checked: a fresh clone does not have them.
const ROOT = resolve(import.meta.dirname, "..");

/** Named by a page but written by another branch at the same time; each entry says which. */
const WRITTEN_ELSEWHERE: Record<string, string> = {};

const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

function docPages(): string[] {
  const docs = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md"));
  return ["README.md", "ARCHITECTURE.md", ...docs.map((f) => `docs/${f}`)];
}

const ignorePatterns = read(".gitignore")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));

/** Whether .gitignore ignores the path (the simple patterns it holds: names, folders, `*.ext`). */
function ignored(path: string): boolean {
  const segments = path.split("/");
  return ignorePatterns.some((p) => {
    if (p.startsWith("*.")) return path.endsWith(p.slice(1));
    const bare = p.replace(/^\/|\/$/g, "");
    if (bare.includes("/")) return path === bare || path.startsWith(`${bare}/`);
    return segments.includes(bare);
  });
}

/** The repository's tracked top-level folders: a path the docs name is checked when it starts with one. */
const TOP_FOLDERS = readdirSync(ROOT, { withFileTypes: true })
  .filter((e) => e.isDirectory() && e.name !== ".git" && !ignored(e.name))
  .map((e) => e.name);

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
// Not after a character that makes it part of a URL or a longer path (`/agents/{id}/docs`, `http://…/docs`).
const PATH = new RegExp(
  `(?<![\\w./:@>$-])(?:\\./)?((?:${TOP_FOLDERS.map(escapeRegExp).join("|")})/[\\w.*<>{}@/-]*)`,
  "g",
);

/** Repository paths a text names: every word that starts with a top-level folder. */
function namedPaths(text: string): string[] {
  // Link targets are relative to their page: the link check reads them.
  const found = [...text.replace(/\]\([^)]*\)/g, "]").matchAll(PATH)].map((m) => m[1].replace(/[.:,]+$/, ""));
  return [...new Set(found)];
}

/** A path with `*`, `**`, `<placeholder>` or `{placeholder}` segments, as a regular expression over paths. */
function pattern(path: string): RegExp {
  const body = path
    .replace(/\/$/, "")
    .split("/")
    .map((seg) =>
      seg === "**"
        ? ".*"
        : escapeRegExp(seg)
            .replace(/\\\*/g, "[^/]*")
            .replace(/<[^>]*>|\\\{[^}]*\\\}/g, "[^/]+"),
    )
    .join("/");
  return new RegExp(`^${body}$`);
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (ignored(path)) return [];
    return e.isDirectory() ? [path, ...filesUnder(path)] : [path];
  });
}

/** Whether a named path exists (a glob or placeholder: whether anything matches it). */
function pathExists(path: string): boolean {
  if (ignored(path)) return true;
  if (!/[*<{]/.test(path)) return existsSync(join(ROOT, path));
  const top = path.split("/")[0];
  const re = pattern(path);
  return filesUnder(top).some((p) => re.test(p));
}

/** Markdown link targets of a page that point into the repository, resolved from the page's folder. */
function linkTargets(page: string, text: string): { path: string; anchor?: string }[] {
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((t) => !/^[a-z]+:/.test(t))
    .map((t) => {
      const [file, anchor] = t.split("#");
      const path = file ? relative(ROOT, normalize(join(ROOT, dirname(page), file))) : page;
      return { path, anchor };
    });
}

/** GitHub's anchors of a page's headings. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const body = text.replace(/```[\s\S]*?```/g, "");
  for (const m of body.matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = m[1]
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n ? `${slug}-${n}` : slug);
  }
  return out;
}

const scripts = Object.keys(JSON.parse(read("package.json")).scripts as Record<string, string>);
const benches = [...read("bench/run.ts").matchAll(/^ {2}"?([\w-]+)"?: async/gm)].map((m) => m[1]);

/** Every module `npm start` runs: the launcher, the program it spawns, and what they import, transitively. */
function launcherModules(): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file) || !existsSync(join(ROOT, file)) || statSync(join(ROOT, file)).isDirectory()) return;
    seen.add(file);
    for (const m of read(file).matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g))
      visit(relative(ROOT, normalize(join(ROOT, dirname(file), m[1]))));
  };
  visit("infra/local/launch.mjs");
  visit("infra/local/main.ts");
  return [...seen];
}

describe("the README and docs/", () => {
  const pages = docPages().map((page) => ({ page, text: read(page) }));

  it("name only repository paths that exist", () => {
    const missing = pages.flatMap(({ page, text }) =>
      namedPaths(text)
        .filter((p) => !pathExists(p) && !WRITTEN_ELSEWHERE[p])
        .map((p) => `${page}: ${p}`),
    );
    expect(missing).toEqual([]);
  });

  it("link only to files and headings that exist", () => {
    const broken = pages.flatMap(({ page, text }) =>
      linkTargets(page, text).flatMap(({ path, anchor }) => {
        if (WRITTEN_ELSEWHERE[path]) return [];
        if (!existsSync(join(ROOT, path))) return [`${page}: ${path}`];
        if (anchor && path.endsWith(".md") && !anchors(read(path)).has(anchor))
          return [`${page}: ${path}#${anchor}`];
        return [];
      }),
    );
    expect(broken).toEqual([]);
  });

  it("name only npm scripts of package.json, and benchmarks bench/run.ts runs", () => {
    const unknown = pages.flatMap(({ page, text }) => [
      ...[...text.matchAll(/npm run ([\w:.-]+)/g)]
        .filter((m) => !scripts.includes(m[1]))
        .map((m) => `${page}: npm run ${m[1]}`),
      ...[...text.matchAll(/npm run bench -- ([\w-]+)/g)]
        .filter((m) => !benches.includes(m[1]))
        .map((m) => `${page}: npm run bench -- ${m[1]}`),
    ]);
    expect(benches.length).toBeGreaterThan(5);
    expect(unknown).toEqual([]);
  });

  it("give each performance figure a benchmark that bench/run.ts runs", () => {
    const perf = read("docs/performance.md");
    const table = perf.slice(perf.indexOf("| `npm run bench -- <name>` |"));
    const rows = [...table.matchAll(/^\| `([\w-]+)` \|/gm)].map((m) => m[1]);
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.filter((name) => !benches.includes(name))).toEqual([]);
  });

  it("name only `npm start` flags the launcher parses", () => {
    const sources = launcherModules().map(read).join("\n");
    const flags = pages.flatMap(({ page, text }) =>
      [...text.matchAll(/npm start -- (--[\w-]+)/g)].map((m) => ({ page, flag: m[1] })),
    );
    expect(flags.length).toBeGreaterThan(0);
    const unknown = flags
      .filter(({ flag }) => !new RegExp(`["'\`]${escapeRegExp(flag)}(?:=|["'\`])`).test(sources))
      .map(({ page, flag }) => `${page}: npm start -- ${flag}`);
    expect(unknown).toEqual([]);
  });

  it("keep the README a front page (at most ~250 lines)", () => {
    expect(read("README.md").split("\n").length).toBeLessThanOrEqual(260);
  });

  it("still name each entry of WRITTEN_ELSEWHERE (drop an entry nobody names)", () => {
    const all = pages.map((p) => p.text).join("\n");
    for (const path of Object.keys(WRITTEN_ELSEWHERE)) expect(all, path).toContain(path);
  });
});

describe("docs/architecture.md's layout", () => {
  const layout = read("docs/architecture.md");
  const folders = (dir: string) =>
    readdirSync(join(ROOT, dir), { withFileTypes: true })
      .filter((e) => e.isDirectory() && !ignored(`${dir}/${e.name}`))
      .map((e) => e.name);

  it("names every folder of the top-level code folders", () => {
    const roots = ["functions", "shared", "infra", "test", "bench", "harness", "examples"];
    const unnamed = roots
      .flatMap((r) => folders(r).map((f) => `${r}/${f}/`))
      .filter((f) => !layout.includes(f));
    expect(unnamed).toEqual([]);
  });

  it("names every resource folder of each API group under functions/", () => {
    const unnamed = folders("functions").flatMap((group) =>
      folders(`functions/${group}`)
        .map((f) => `${f}/`)
        .filter((f) => !layout.includes(`\`${f}\``) && !layout.includes(`functions/${group}/${f}`))
        .map((f) => `functions/${group}/${f}`),
    );
    expect(unnamed).toEqual([]);
  });
});

describe("the checks themselves", () => {
  it("find a path that does not exist", () => {
    const text = "Read `shared/no-such-module.ts` and infra/local/gateway.ts, not http://x/docs/a.md.";
    expect(namedPaths(text)).toEqual(["shared/no-such-module.ts", "infra/local/gateway.ts"]);
    expect(pathExists("shared/no-such-module.ts")).toBe(false);
    expect(pathExists("infra/local/gateway.ts")).toBe(true);
  });

  it("read globs and placeholders as patterns, and skip what .gitignore ignores", () => {
    expect(pathExists("infra/state-machines/*.asl.json")).toBe(true);
    expect(pathExists("infra/state-machines/*.yaml")).toBe(false);
    expect(pathExists("functions/agent/**")).toBe(true);
    expect(pathExists("console/dist/index.html")).toBe(true);
  });

  it("make GitHub's anchors of headings", () => {
    const a = anchors("# Title\n## A graph on disk (`--graph`)\n## Title\n```\n# not a heading\n```\n");
    expect([...a]).toEqual(["title", "a-graph-on-disk---graph", "title-1"]);
  });
});
