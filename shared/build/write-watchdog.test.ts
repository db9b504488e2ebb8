import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { allocatedBytes, watchWrites } from "./write-watchdog.ts";

const dir = mkdtempSync(join(tmpdir(), "write-watchdog-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("what a build writes to its host folders", () => {
  it("counts allocated bytes: a sparse file for what it holds, not its length", async () => {
    const d = join(dir, "sparse");
    mkdirSync(d);
    writeFileSync(join(d, "real"), Buffer.alloc(256 * 1024, 1));
    writeFileSync(join(d, "sparse"), "");
    truncateSync(join(d, "sparse"), 1024 ** 3);
    const n = await allocatedBytes(d);
    expect(n).toBeGreaterThanOrEqual(256 * 1024);
    expect(n).toBeLessThan(1024 * 1024);
  });

  it("calls over once the folders grew past the bound since the start, not for what they held before", async () => {
    const [a, b] = [join(dir, "a"), join(dir, "b")];
    mkdirSync(a);
    mkdirSync(b);
    writeFileSync(join(a, "before"), Buffer.alloc(2 * 1024 * 1024, 1));
    const seen: number[] = [];
    const dog = await watchWrites([a, b], 1024 * 1024, (g) => seen.push(g), 50);
    writeFileSync(join(b, "small"), Buffer.alloc(512 * 1024, 1));
    await sleep(300);
    expect(seen).toEqual([]);
    writeFileSync(join(a, "more"), Buffer.alloc(1024 * 1024, 1));
    await sleep(300);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeGreaterThan(1024 * 1024);
    writeFileSync(join(a, "even-more"), Buffer.alloc(1024 * 1024, 1));
    await sleep(200);
    expect(seen).toHaveLength(1);
    await dog.stop();
  });
});
