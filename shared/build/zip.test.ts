import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { zip } from "./zip.ts";

// The zip a runtime function's code is uploaded as: read back by Python's zipfile (a reader independent of ours).
describe("zip", () => {
  it("an archive others read back byte for byte, with folders, unicode names and empty files", () => {
    const entries = [
      { name: "index.mjs", data: Buffer.from('export { handler } from "/opt/nodejs/agent-runtime.mjs";\n') },
      { name: "graphs/agent.mjs", data: Buffer.from("x".repeat(100_000)) },
      { name: "graphs/ünïcode-é.mjs", data: Buffer.from("export const a = 1;") },
      { name: "empty.txt", data: Buffer.alloc(0) },
      { name: "manifest.json", data: Buffer.from(JSON.stringify({ graphs: {} })) },
    ];
    const dir = mkdtempSync(join(tmpdir(), "zip-test-"));
    try {
      const file = join(dir, "code.zip");
      writeFileSync(file, zip(entries));
      const out = join(dir, "out");
      execFileSync("python3", ["-m", "zipfile", "-t", file]);
      execFileSync("python3", ["-m", "zipfile", "-e", file, out]);
      for (const e of entries) expect(readFileSync(join(out, e.name)).equals(Buffer.from(e.data))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
