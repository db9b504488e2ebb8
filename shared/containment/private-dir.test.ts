import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { privateDir, privateDirSync } from "./private-dir.ts";

const tmp = mkdtempSync(join(tmpdir(), "private-dir-test-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const mode = (p: string) => statSync(p).mode & 0o777;

describe("folders of deployments' code, builds and tokens are this user's alone", () => {
  it("a new folder, and each missing parent, is made 0700 whatever the umask", async () => {
    const old = process.umask(0);
    try {
      const dir = await privateDir(join(tmp, "a", "b"));
      expect(mode(dir)).toBe(0o700);
      expect(mode(join(tmp, "a"))).toBe(0o700);
      expect(mode(privateDirSync(join(tmp, "c", "d")))).toBe(0o700);
    } finally {
      process.umask(old);
    }
  });

  it("an existing folder of ours left open (0755, 0777) is narrowed to 0700", async () => {
    for (const open of [0o755, 0o777]) {
      const dir = join(tmp, `open-${open.toString(8)}`);
      mkdirSync(dir);
      chmodSync(dir, open);
      await privateDir(dir);
      expect(mode(dir)).toBe(0o700);
    }
  });

  it("a link in the folder's place (someone else's under /tmp) is refused, unless it is the operator's (follow)", async () => {
    const target = join(tmp, "elsewhere");
    mkdirSync(target);
    const link = join(tmp, "link");
    symlinkSync(target, link);
    await expect(privateDir(link)).rejects.toThrow(/not a folder/);
    expect(() => privateDirSync(link)).toThrow(/not a folder/);
    expect(mode(privateDirSync(link, { follow: true }))).toBe(0o700);
  });

  it("a folder sandboxes pass through keeps others' x bit (enter a known name), never their r or w", async () => {
    const dir = join(tmp, "pass");
    mkdirSync(dir);
    chmodSync(dir, 0o701);
    await privateDir(dir, { passThrough: true });
    expect(mode(dir)).toBe(0o701);
    chmodSync(dir, 0o777);
    await privateDir(dir, { passThrough: true });
    expect(mode(dir)).toBe(0o701);
    await privateDir(dir);
    expect(mode(dir)).toBe(0o700);
  });
});
