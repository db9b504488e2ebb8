import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { BuildError } from "../errors.ts";
import { exchangeKeys, packArtifact, unpackArtifact } from "./build-exchange.ts";

const packed = (files: unknown) => gzipSync(JSON.stringify({ files }));
const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("the build's artifact as one object", () => {
  it("carries every file of the artifact folder, byte for byte", async () => {
    const dir = await mkdtemp(join(tmpdir(), "pack-"));
    await mkdir(join(dir, "graphs"), { recursive: true });
    await writeFile(join(dir, "manifest.json"), '{"graphs":{}}');
    await writeFile(join(dir, "graphs", "agent.mjs"), Buffer.from([0, 1, 2, 255]));
    const files = unpackArtifact(await packArtifact(dir)).sort((a, b) => a.path.localeCompare(b.path));
    expect(files.map((f) => f.path)).toEqual(["graphs/agent.mjs", "manifest.json"]);
    expect([...files[0]!.data]).toEqual([0, 1, 2, 255]);
    expect(files[1]!.data.toString()).toBe('{"graphs":{}}');
  });

  it.each([
    ["a parent segment", "../x.mjs"],
    ["a parent segment inside", "graphs/../../x"],
    ["an absolute path", "/etc/passwd"],
    ["a backslash", "..\\x"],
    ["an empty segment", "a//b"],
    ["a NUL", "a\0b"],
  ])("refuses a path with %s, naming the artifact", (_, path) => {
    expect(() => unpackArtifact(packed([{ path, data: b64("x") }]))).toThrow(BuildError);
  });

  it("refuses a path given twice", () => {
    const file = { path: "a.mjs", data: b64("x") };
    expect(() => unpackArtifact(packed([file, file]))).toThrow(/twice/);
  });

  it.each([
    ["not gzip", Buffer.from("plain")],
    ["not JSON", gzipSync("{")],
    ["not the shape", gzipSync(JSON.stringify({ files: [{ path: "a", data: 1 }] }))],
  ])("refuses a body that is %s with a BuildError", (_, body) => {
    expect(() => unpackArtifact(body)).toThrow(BuildError);
  });

  it("keeps a build's exchange objects under its revision's builds/ prefix, one folder per attempt", () => {
    const keys = exchangeKeys({ tenant_id: "t", deployment_id: "d", id: "r", attempt: "a1" });
    for (const key of Object.values(keys)) expect(key.startsWith("builds/t/d/r/a1/")).toBe(true);
  });
});
