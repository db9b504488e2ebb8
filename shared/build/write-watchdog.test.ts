import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runSourceBuild } from "./source-build-process.ts";
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
    expect(await dog.grown()).toBeGreaterThan(1024 * 1024);
  });
});

describe("a build past BUILD_MAX_WRITE_BYTES", () => {
  it("fails saying so: a graph module of 80 MB bundled into its output, with 64 MiB allowed (before: built)", async () => {
    const before = process.env.BUILD_MAX_WRITE_BYTES;
    process.env.BUILD_MAX_WRITE_BYTES = String(64 * 1024 * 1024);
    try {
      const work = join(dir, "build");
      const src = join(work, "src");
      mkdirSync(join(src, "src"), { recursive: true });
      writeFileSync(
        join(src, "langgraph.json"),
        JSON.stringify({ graphs: { agent: "./src/graph.mjs:graph" } }),
      );
      writeFileSync(
        join(src, "src/graph.mjs"),
        `export const big = "${"x".repeat(80 * 1024 * 1024)}";\nexport const graph = big.length;\n`,
      );
      const job = {
        src,
        out: join(work, "out"),
        scratch: join(work, "scratch"),
        graphConfigPath: "langgraph.json",
        npmSecrets: {},
        lambdaRuntimes: false,
      };
      const failed = await runSourceBuild(job, () => {}, "build:t").then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(failed?.message).toMatch(/more than the 64 MiB a build may \(BUILD_MAX_WRITE_BYTES\)/);
    } finally {
      if (before === undefined) delete process.env.BUILD_MAX_WRITE_BYTES;
      else process.env.BUILD_MAX_WRITE_BYTES = before;
    }
  }, 300_000);
});
