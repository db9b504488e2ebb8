import { lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { giveToSandbox, sandboxHostId } from "./sandbox.ts";

const tmp = mkdtempSync(join(tmpdir(), "sandbox-owner-test-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const owner = "runtime:sandbox-owner-test";
const ownerOf = (p: string) => {
  const s = lstatSync(p);
  return [s.uid, s.gid];
};

// Only a root platform hands folders to a sandbox's own uid (otherwise the sandbox runs as the platform's user).
describe.skipIf(process.getuid?.() !== 0)("giveToSandbox: what a sandbox may write is its uid's", () => {
  const id = sandboxHostId(owner) as number;

  it("an empty folder and a file (given without a chown process) become the sandbox's, links themselves", () => {
    const empty = join(tmp, "empty");
    const file = join(tmp, "file");
    const target = join(tmp, "target");
    const link = join(tmp, "link");
    mkdirSync(empty);
    writeFileSync(file, "x");
    writeFileSync(target, "t");
    symlinkSync(target, link);
    giveToSandbox(owner, [empty, file, link]);
    expect(ownerOf(empty)).toEqual([id, id]);
    expect(ownerOf(file)).toEqual([id, id]);
    expect(ownerOf(link)).toEqual([id, id]);
    // The link itself, not what it points to.
    expect(ownerOf(target)).toEqual([0, 0]);
  });

  it("a folder with contents becomes the sandbox's all the way down, beside an empty one in the same call", () => {
    const tree = join(tmp, "tree");
    const outside = join(tmp, "outside");
    const empty = join(tmp, "empty-too");
    mkdirSync(join(tree, "a", "b"), { recursive: true });
    writeFileSync(join(tree, "a", "b", "f"), "x");
    writeFileSync(outside, "o");
    symlinkSync(outside, join(tree, "a", "to-outside"));
    mkdirSync(empty);
    giveToSandbox(owner, [empty, tree]);
    for (const p of [tree, join(tree, "a"), join(tree, "a", "b"), join(tree, "a", "b", "f"), empty])
      expect(ownerOf(p)).toEqual([id, id]);
    expect(ownerOf(join(tree, "a", "to-outside"))).toEqual([id, id]);
    expect(ownerOf(outside)).toEqual([0, 0]);
  });

  it("a path that does not exist is refused, as chown refuses it", () => {
    expect(() => giveToSandbox(owner, [join(tmp, "missing")])).toThrow();
  });
});
