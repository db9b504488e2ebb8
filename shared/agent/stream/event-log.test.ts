import { describe, expect, it } from "vitest";
import type { EventChunkRecord } from "../../records/agent.ts";
import { chunkFrames, EventLog, sizeFrame } from "./event-log.ts";

// The run event log's chunking (sizes in UTF-8 bytes, as DynamoDB counts them) and its flushes, with the
// write to DynamoDB replaced by a function: a failed flush is a fault DynamoDB Local does not cause on demand.
const frames = (text: string, n: number) =>
  Array.from({ length: n }, (_, i) => sizeFrame({ seq: i + 1, event: "custom", data: text }));
const stored = (items: EventChunkRecord[]) =>
  items.flatMap((i) => JSON.parse(i.frames) as { seq: number }[]).map((f) => f.seq);

describe("run event log: chunks", () => {
  it("a frame's size is its UTF-8 bytes: emoji and CJK count 4 and 3 bytes, not their string length", () => {
    const ascii = sizeFrame({ seq: 1, event: "custom", data: "a".repeat(1000) }).bytes;
    expect(sizeFrame({ seq: 1, event: "custom", data: "😀".repeat(1000) }).bytes).toBe(ascii + 3000);
    expect(sizeFrame({ seq: 1, event: "custom", data: "漢".repeat(1000) }).bytes).toBe(ascii + 2000);
  });

  it("chunks of emoji and CJK frames stay within the chunk budget in bytes, every frame kept in order", () => {
    const all = [...frames("😀".repeat(20_000), 10), ...frames("漢字".repeat(15_000), 10)];
    const chunks = chunkFrames(all, 350_000);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) expect(Buffer.byteLength(JSON.stringify(c))).toBeLessThanOrEqual(350_000);
    expect(chunks.flat().map((f) => f.seq)).toEqual(all.map((f) => f.frame.seq));
  });

  it("a frame too big in bytes (though short as a string) is kept as a marker", () => {
    const { frame } = sizeFrame({ seq: 7, event: "values", data: "😀".repeat(100_000) });
    expect(frame).toEqual({ seq: 7, event: "values", data: JSON.stringify({ truncated: true }) });
  });
});

describe("run event log: flushes", () => {
  it("a failed flush poisons no later write: its frames go with the next flush", async () => {
    const written: EventChunkRecord[][] = [];
    let failures = 1;
    const log = new EventLog("t#d", "run", async (items) => {
      if (failures-- > 0) throw new Error("throttled");
      written.push(items);
    });
    log.add({ seq: 1, event: "custom", data: 1 });
    await expect(log.flush()).rejects.toThrow("throttled");
    log.add({ seq: 2, event: "custom", data: 2 });
    await log.flush();
    log.add({ seq: 3, event: "custom", data: 3 });
    await log.flush();
    expect(written.map(stored)).toEqual([[1, 2], [3]]);
    expect(await log.take()).toEqual([]);
  });

  it("frames a failed flush could not store are handed to the run's final write", async () => {
    const log = new EventLog("t#d", "run", async () => {
      throw new Error("unavailable");
    });
    log.add({ seq: 1, event: "custom", data: 1 });
    await expect(log.flush()).rejects.toThrow("unavailable");
    log.add({ seq: 2, event: "custom", data: 2 });
    expect(stored(await log.take())).toEqual([1, 2]);
  });
});
