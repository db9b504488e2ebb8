import { describe, expect, it } from "vitest";
import { ACTIVE_RUNS, AGENT_INDEX_SHARDS } from "./agent.ts";
import { hashShard, shardKey, shardKeys } from "./shard.ts";

describe("sharded index partitions", () => {
  it("put an id's entry under the same shard every time, one of the shards readers query", () => {
    const id = crypto.randomUUID();
    expect(shardKey(ACTIVE_RUNS, id)).toBe(shardKey(ACTIVE_RUNS, id));
    expect(shardKeys(ACTIVE_RUNS)).toContain(shardKey(ACTIVE_RUNS, id));
    expect(shardKeys(ACTIVE_RUNS)).toHaveLength(AGENT_INDEX_SHARDS);
  });

  it("spread ids over every shard, none with much more than its share", () => {
    const counts = new Array(AGENT_INDEX_SHARDS).fill(0);
    for (let i = 0; i < 16_000; i++) counts[hashShard(crypto.randomUUID(), AGENT_INDEX_SHARDS)]++;
    for (const c of counts) expect(c).toBeGreaterThan(800);
    for (const c of counts) expect(c).toBeLessThan(1200);
  });
});
