import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { cacheEntry, cacheKey, restoreModules, storeModules, tenantCacheDir } from "./dep-cache.ts";

let tmp: string;
let n = 0;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "dep-cache-test-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});
afterEach(() => {
  vi.unstubAllEnvs();
});

async function pkg(files: Record<string, string>): Promise<string> {
  const dir = path.join(tmp, `pkg-${++n}`);
  await mkdir(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  return dir;
}

const INPUTS = { command: "ci --omit=dev", npmrc: "", npmVersion: "11.0.0" };

describe("the dependency cache", () => {
  it("each workspace has a folder of its own; no BUILD_CACHE_DIR, no cache", () => {
    expect(tenantCacheDir("t1")).toBeUndefined();
    vi.stubEnv("BUILD_CACHE_DIR", path.join(tmp, "cache"));
    const a = tenantCacheDir("7f0c2a9e-0000-4000-8000-000000000001")!;
    const b = tenantCacheDir("7f0c2a9e-0000-4000-8000-000000000002")!;
    expect(a).not.toBe(b);
    expect(path.dirname(a)).toBe(path.dirname(b));
    // A name that is not a plain id cannot climb out of the cache.
    expect(path.dirname(tenantCacheDir("../../etc")!)).toBe(path.dirname(a));
  });

  it("the key changes with every input npm reads, and only with them", async () => {
    const base = { "package.json": '{"name":"a"}', "package-lock.json": '{"lockfileVersion":3}' };
    const dir = await pkg(base);
    const key = await cacheKey(dir, "package-lock.json", INPUTS);
    expect(await cacheKey(await pkg(base), "package-lock.json", INPUTS)).toBe(key);
    const others = [
      await cacheKey(await pkg({ ...base, "package.json": '{"name":"b"}' }), "package-lock.json", INPUTS),
      await cacheKey(await pkg({ ...base, "package-lock.json": "{}" }), "package-lock.json", INPUTS),
      await cacheKey(dir, undefined, INPUTS),
      await cacheKey(dir, "package-lock.json", { ...INPUTS, npmrc: "registry=https://r.example/\n" }),
      await cacheKey(dir, "package-lock.json", { ...INPUTS, npmVersion: "11.0.1" }),
      await cacheKey(dir, "package-lock.json", { ...INPUTS, command: "install --omit=dev" }),
    ];
    expect(new Set([key, ...others]).size).toBe(others.length + 1);
  });

  it("trees are copied: writing into a restored tree leaves the cache entry as stored", async () => {
    const modules = path.join(await pkg({}), "node_modules");
    await mkdir(path.join(modules, "dep"), { recursive: true });
    await writeFile(path.join(modules, "dep", "index.js"), "original");
    const entry = cacheEntry(path.join(tmp, "cache-copy"), "k");
    await storeModules(modules, entry, () => {});
    const restored = path.join(await pkg({}), "node_modules");
    expect(await restoreModules(entry, restored)).toBe(true);
    await writeFile(path.join(restored, "dep", "index.js"), "tampered");
    expect(await readFile(path.join(entry, "dep", "index.js"), "utf8")).toBe("original");
    const [a, b] = await Promise.all([
      stat(path.join(entry, "dep", "index.js")),
      stat(path.join(modules, "dep", "index.js")),
    ]);
    expect(a.ino).not.toBe(b.ino);
    expect(await restoreModules(cacheEntry(path.join(tmp, "cache-copy"), "missing"), restored)).toBe(false);
  });
});
