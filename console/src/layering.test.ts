import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

// The console's layering, checked over console/src (tests aside): components never import views; the server's
// wire shapes come through one module (src/wire.ts) as types only, so nothing server-side lands in the bundle;
// the only code the bundle takes from outside console/src is a module that imports nothing itself.
const ROOT = join(dirname(new URL(import.meta.url).pathname), "../..");
const SRC = "console/src";

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) ? [path] : [];
  });
}

/** The relative imports of files (path → text), resolved to paths from the repository's root. */
function importsOf(files: Record<string, string>): Import[] {
  return Object.entries(files).flatMap(([from, text]) =>
    [
      ...text.matchAll(/(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^"';]*?\s+from\s+)?"(\.{1,2}\/[^"]+)"/g),
    ].map((m) => ({ from, to: normalize(join(dirname(from), m[3])), typeOnly: Boolean(m[2]) })),
  );
}

const inside = (path: string, dir: string) => !relative(dir, path).startsWith("..");

/** Every import that breaks a rule, as `from → to: why`. */
function violations(imports: Import[], read: (path: string) => string): string[] {
  const out: string[] = [];
  for (const i of imports) {
    const edge = `${i.from} → ${i.to}`;
    if (inside(i.from, `${SRC}/components`) && inside(i.to, `${SRC}/views`))
      out.push(`${edge}: a component imports a view`);
    if (inside(i.to, SRC)) continue;
    if (i.typeOnly) {
      if (i.from !== `${SRC}/wire.ts`) out.push(`${edge}: server types come through ${SRC}/wire.ts`);
    } else if (/(?:^|\n)\s*(import|export)\s[^;]*?from\s+"/.test(read(i.to)))
      out.push(`${edge}: code bundled from outside the console must import nothing`);
  }
  return out;
}

describe("console layering", () => {
  const files = Object.fromEntries(sourceFiles(SRC).map((f) => [f, readFileSync(join(ROOT, f), "utf8")]));
  const imports = importsOf(files);
  const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

  it("finds the imports it checks", () => {
    expect(imports).toContainEqual({
      from: `${SRC}/wire.ts`,
      to: "shared/agent/assistants/assistants.ts",
      typeOnly: true,
    });
    expect(imports).toContainEqual({
      from: `${SRC}/components/trace-run.tsx`,
      to: `${SRC}/format.ts`,
      typeOnly: false,
    });
  });

  it("components import no view; server types come through wire.ts only; bundled outside code is a leaf", () => {
    expect(violations(imports, read)).toEqual([]);
  });

  // The console's tsconfig loads Node's types only so that tsc can follow wire.ts into the server's modules.
  it("the browser code names no Node module or global", () => {
    const node = Object.entries(files).filter(([, text]) =>
      /"node:|\b(process|Buffer|__dirname|require)\s*[.(]/.test(text),
    );
    expect(node.map(([f]) => f)).toEqual([]);
  });

  it("reports each kind of violation", () => {
    const made = importsOf({
      [`${SRC}/components/a.tsx`]: 'import { V } from "../views/v.tsx";',
      [`${SRC}/views/b.tsx`]:
        'import type { T } from "../../../shared/t.ts";\nimport { f } from "../../../shared/f.ts";',
    });
    const texts: Record<string, string> = { "shared/f.ts": 'import { z } from "zod";\nexport const f = 1;' };
    expect(violations(made, (p) => texts[p] ?? "")).toEqual([
      `${SRC}/components/a.tsx → ${SRC}/views/v.tsx: a component imports a view`,
      `${SRC}/views/b.tsx → shared/t.ts: server types come through ${SRC}/wire.ts`,
      `${SRC}/views/b.tsx → shared/f.ts: code bundled from outside the console must import nothing`,
    ]);
  });
});
