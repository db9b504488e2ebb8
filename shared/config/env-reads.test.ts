import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The config module is the one reader of the environment: every other module of shared/, functions/ and infra/
// gets its settings from the parsed value. Writes that set up a child's environment (or a sandbox's proxies) are
// allowed; tests and benchmarks are not scanned.

const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
const SCANNED = ["shared", "functions", "infra"];
const CONFIG_MODULE = ["shared/config.ts", "shared/config/"];
const SOURCE = /\.(ts|mts|mjs|js|tsx)$/;
const NOT_SCANNED = /\.(test|fuzz\.test|bench)\.(ts|mts|mjs|js|tsx)$|\.d\.ts$/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" || e.name === "dist" ? [] : sources(p);
    return SOURCE.test(e.name) && !NOT_SCANNED.test(e.name) ? [p] : [];
  });
}

/** The code without comments and string literals (a comment or a string may name process.env). */
function code(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(^|[^:\\])\/\/.*$/gm, "$1")
    .replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, '""');
}

/** Each read of the environment in `text`: its line. A write (`process.env.X = v`, delete, Object.assign) is none. */
function environmentReads(text: string): string[] {
  const reads = [...text.matchAll(/import\s*\{[^}]*\benv\b[^}]*\}\s*from\s*["'](node:)?process["']/g)].map(
    (m) => m[0],
  );
  for (const line of code(text).split("\n")) {
    if (/\{\s*env\s*\}\s*=\s*process\b|\bprocess\s*\[/.test(line)) reads.push(line.trim());
    for (const m of line.matchAll(/process\.env\b/g)) {
      const before = line.slice(0, m.index);
      const after = line.slice(m.index + m[0].length);
      const write =
        /\bdelete\s+$/.test(before) ||
        /Object\.assign\(\s*$/.test(before) ||
        /^(\.[A-Za-z_$][\w$]*|\[[^\]]*\])\s*=(?!=)/.test(after);
      if (!write) reads.push(line.trim());
    }
  }
  return reads;
}

describe("the config module is the one reader of the environment", () => {
  it("finds reads and lets writes pass (the scanner itself)", () => {
    expect(environmentReads("const a = process.env.PORT;")).toHaveLength(1);
    expect(environmentReads("spawn(x, { env: { ...process.env } });")).toHaveLength(1);
    expect(environmentReads('const v = process.env["A"] ?? 1;')).toHaveLength(1);
    expect(environmentReads("const { env } = process;")).toHaveLength(1);
    expect(environmentReads('import { env } from "node:process";')).toHaveLength(1);
    expect(environmentReads("if (process.env.A === '1') f();")).toHaveLength(1);
    expect(environmentReads('process.env.A = "1";\ndelete process.env.B;\nprocess.env[name] = url;')).toEqual(
      [],
    );
    expect(environmentReads("Object.assign(process.env, set);")).toEqual([]);
    expect(environmentReads('// process.env.A is read by config\nconst s = "process.env.NODE_ENV";')).toEqual(
      [],
    );
  });

  it("no module of shared/, functions/ or infra/ but the config module reads process.env", () => {
    const found: string[] = [];
    for (const dir of SCANNED)
      for (const file of sources(join(ROOT, dir))) {
        const rel = relative(ROOT, file);
        if (CONFIG_MODULE.some((c) => rel === c || rel.startsWith(c))) continue;
        for (const read of environmentReads(readFileSync(file, "utf8"))) found.push(`${rel}: ${read}`);
      }
    expect(found).toEqual([]);
  });
});
