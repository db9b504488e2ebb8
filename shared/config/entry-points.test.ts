import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { processEnvironment } from "../config.ts";

// Each entry point parses its settings before it does anything: a bad value stops it, naming the variable.
const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");

const start = (entry: string, env: Record<string, string>) =>
  spawnSync(process.execPath, ["--import", "tsx", join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...processEnvironment(), ...env },
    encoding: "utf8",
    timeout: 60_000,
  });

describe("a bad setting stops the start, naming the variable", () => {
  it.each([
    ["the local cloud (npm start)", "infra/local/main.ts"],
    ["a Lambda function's bootstrap", "functions/bootstrap.ts"],
    ["the revision build step", "infra/build/revision-build.ts"],
    ["a CLI script", "infra/admin/set-rate-limit.ts"],
  ])("%s", (_, entry) => {
    const r = start(entry, { LOG_LEVEL: "verbose", EXPORT_MAX_RETRIES: "abc" });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("LOG_LEVEL must be one of debug, info, warn, error");
    expect(r.stderr).toContain('EXPORT_MAX_RETRIES must be a whole number from 0 to 99999999, got "abc"');
  });
});
