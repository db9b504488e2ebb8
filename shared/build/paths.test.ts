import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BuildError } from "../errors.ts";
import { checkSymlinks, inParentPackages } from "./paths.ts";

let tmp: string;
let n = 0;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "paths-test-"));
  await writeFile(path.join(tmp, "host-secret"), "root:x:0:0\n");
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** A tree with a file `a/b/file` and the links given (path → target as written). */
async function tree(links: Record<string, string>): Promise<string> {
  const root = path.join(tmp, `repo-${++n}`);
  await mkdir(path.join(root, "a", "b"), { recursive: true });
  await writeFile(path.join(root, "a", "b", "file"), "x");
  for (const [at, to] of Object.entries(links)) {
    await mkdir(path.dirname(path.join(root, at)), { recursive: true });
    await symlink(to, path.join(root, at));
  }
  return root;
}

const refusal = async (root: string) => {
  const err = await checkSymlinks(root).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(BuildError);
  return (err as Error).message;
};

describe("symlinks in a fetched repository", () => {
  it("links inside the repository are fine, to files and folders, relative and chained", async () => {
    const root = await tree({
      "link-file": "a/b/file",
      "a/up": "../a/b",
      chain: "link-file",
      "dangling-inside": "a/missing",
    });
    await expect(checkSymlinks(root)).resolves.toBeUndefined();
  });

  it("an absolute link fails naming the file", async () => {
    const root = await tree({ "package.json": path.join(tmp, "host-secret") });
    expect(await refusal(root)).toBe("package.json is a symlink that points outside the repository");
  });

  it("a relative link climbing out fails naming the file, deep in the tree too", async () => {
    const root = await tree({ "src/deep/x.ts": "../../../host-secret" });
    expect(await refusal(root)).toBe("src/deep/x.ts is a symlink that points outside the repository");
  });

  it("a chain that leaves only once its links are followed fails", async () => {
    // a/b/up → ".." is a/ (inside); "esc" → a/b/up/../.. reads as the root but the kernel lands above it.
    const root = await tree({ "a/b/up": "..", esc: "a/b/up/../../host-secret" });
    expect(await refusal(root)).toMatch(/^esc is a symlink that points outside/);
  });

  it("a link to a folder outside fails, and a dangling link that would lead outside", async () => {
    expect(await refusal(await tree({ dir: tmp }))).toMatch(/^dir /);
    expect(await refusal(await tree({ gone: "../../nowhere" }))).toMatch(/^gone /);
  });

  it("the message never holds the target's content", async () => {
    const root = await tree({ "package.json": "../host-secret" });
    expect(await refusal(root)).not.toContain("root:x");
  });
});

describe("packages of the folders above", () => {
  it("are the node_modules of a folder above the root, nothing else above it", () => {
    const root = "/work/app/graphs";
    expect(inParentPackages(root, "/work/app/node_modules/@langchain/core/index.js")).toBe(true);
    expect(inParentPackages(root, "/node_modules/x/index.js")).toBe(true);
    expect(inParentPackages(root, "/work/app/src/secret.ts")).toBe(false);
    expect(inParentPackages(root, "/work/app/node_modules_evil/x.js")).toBe(false);
    expect(inParentPackages(root, "/work/other/node_modules/x.js")).toBe(false);
    expect(inParentPackages(root, "/work/app/node_modules/../src/secret.ts")).toBe(false);
    // The root's own node_modules is the root's (not "above" it); a sibling's is not an ancestor's.
    expect(inParentPackages(root, "/work/app/graphs2/node_modules/x.js")).toBe(false);
  });
});
