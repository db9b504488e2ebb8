import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { unzip, zip } from "./zip.ts";

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

  it("unzip reads back ours and Python's (stored and deflated) byte for byte", () => {
    const entries = [
      { name: "index.mjs", data: Buffer.from("export {};\n") },
      { name: "graphs/agent.mjs", data: Buffer.from("y".repeat(50_000)) },
      { name: "empty.txt", data: Buffer.alloc(0) },
    ];
    expect(unzip(zip(entries)).map((e) => [e.name, Buffer.from(e.data).toString()])).toEqual(
      entries.map((e) => [e.name, e.data.toString()]),
    );
    const dir = mkdtempSync(join(tmpdir(), "zip-test-"));
    try {
      writeFileSync(join(dir, "a.txt"), "stored");
      const file = join(dir, "py.zip");
      execFileSync("python3", [
        "-c",
        "import zipfile,sys; z=zipfile.ZipFile(sys.argv[1],'w'); z.write(sys.argv[2],'d/a.txt',compress_type=zipfile.ZIP_STORED); z.writestr('d/b.txt','x'*999,compress_type=zipfile.ZIP_DEFLATED); z.close()",
        file,
        join(dir, "a.txt"),
      ]);
      const read = unzip(readFileSync(file));
      expect(read.map((e) => [e.name, Buffer.from(e.data).toString()])).toEqual([
        ["d/a.txt", "stored"],
        ["d/b.txt", "x".repeat(999)],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("unzip refuses names outside the folder, a wrong CRC and more than its limit", () => {
    for (const name of ["../x", "/etc/passwd", "a/../../b", "a//b"])
      expect(() => unzip(zip([{ name, data: Buffer.from("x") }]))).toThrow(/not a zip file Lambda can read/);
    const good = zip([{ name: "a", data: Buffer.from("hello") }]);
    const bad = Buffer.from(good);
    const dirAt = good.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    bad.writeUInt32LE(good.readUInt32LE(dirAt + 16) ^ 1, dirAt + 16); // the central directory's CRC
    expect(() => unzip(bad)).toThrow(/CRC/);
    expect(() => unzip(zip([{ name: "a", data: Buffer.alloc(100) }]), 99)).toThrow(/more than 99 bytes/);
    expect(() => unzip(Buffer.from("not a zip at all, not at all"))).toThrow(/no end of central directory/);
  });
});
