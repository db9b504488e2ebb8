import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { buildConfig } from "../shared/config.ts";

// Issue 16, item 7: a fresh machine of any supported platform installs from the lockfile (`npm ci` takes
// only what it lists) and lints only the repository's own files.
const root = resolve(import.meta.dirname, "..");
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
  packages: Record<string, { version?: string; optionalDependencies?: Record<string, string> }>;
};
const PLATFORMS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64"];
const NATIVE = { "@biomejs/biome": "@biomejs/cli-", "@duckdb/node-bindings": "@duckdb/node-bindings-" };

describe("the lockfile", () => {
  for (const [pkg, prefix] of Object.entries(NATIVE)) {
    it(`lists ${pkg}'s native binary for every supported platform, at its version`, () => {
      const version = lock.packages[`node_modules/${pkg}`]?.version;
      expect(version, `${pkg} is locked`).toBeDefined();
      for (const platform of PLATFORMS)
        expect(lock.packages[`node_modules/${prefix}${platform}`]?.version, `${prefix}${platform}`).toBe(
          version,
        );
    });
  }

  it("has an entry for every optional dependency of every locked package (esbuild's and the rest too)", () => {
    const missing = Object.entries(lock.packages).flatMap(([at, p]) =>
      Object.keys(p.optionalDependencies ?? {}).filter(
        (dep) =>
          !lock.packages[`${at ? `${at}/` : ""}node_modules/${dep}`] && !lock.packages[`node_modules/${dep}`],
      ),
    );
    expect(missing).toEqual([]);
  });
});

describe("the linter", () => {
  it("skips what .gitignore ignores (the local cloud's data directory among them)", () => {
    // The default DATA_DIR of `npm start` is .data inside the checkout (the settings schema's default, main.ts's).
    expect(buildConfig({}).localCloud.dataDir).toBe(".data");
    expect(readFileSync(join(root, "infra/local/main.ts"), "utf8")).toContain("dataDir: local.dataDir");
    const dir = mkdtempSync(join(tmpdir(), "lint-ignore-"));
    try {
      copyFileSync(join(root, "biome.json"), join(dir, "biome.json"));
      // A folder only .gitignore names proves biome reads it, not just its own exclusions.
      writeFileSync(
        join(dir, ".gitignore"),
        `${readFileSync(join(root, ".gitignore"), "utf8")}\nscratch-data/\n`,
      );
      const stray = "var a = 1\nif (a == 2) { debugger }\n";
      for (const folder of [".data/dynamodb", "scratch-data", "tmp", "src"]) {
        mkdirSync(join(dir, folder), { recursive: true });
        writeFileSync(join(dir, folder, "stray.js"), stray);
      }
      const biome = join(root, "node_modules", ".bin", process.platform === "win32" ? "biome.cmd" : "biome");
      const lint = () => {
        try {
          return execFileSync(biome, ["lint", "--reporter=json", "."], {
            cwd: dir,
            encoding: "utf8",
            stdio: ["ignore", "pipe", "pipe"],
          });
        } catch (err: any) {
          return String(err.stdout);
        }
      };
      const flagged = (out: string) =>
        [
          ...new Set(
            (JSON.parse(out).diagnostics as { location?: { path?: string } }[]).map((d) => d.location?.path),
          ),
        ].sort();
      // Only the file outside every ignored folder is linted.
      expect(flagged(lint())).toEqual(["src/stray.js"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
