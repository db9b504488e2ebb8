import { describe, expect, it } from "vitest";
import "./helpers/cloud.ts";
import { randomUUID } from "node:crypto";
import { deleteEventLog, EventLog, lastEventSeq, readEventLog } from "../shared/agent/stream/event-log.ts";

// The durable log of a run's stream frames on DynamoDB Local: frames are stored in chunks (one item per
// flush), and every read by seq — replay, resume after Last-Event-ID, the last seq — sees single frames.
const scope = `t-${randomUUID()}#d`;

describe("run event log", () => {
  it("answers the frames after any seq, across flushes, and the last seq", async () => {
    const run = randomUUID();
    const log = new EventLog(scope, run);
    for (let seq = 1; seq <= 3; seq++) log.add({ seq, event: "values", data: { n: seq } });
    await log.flush();
    log.add({ seq: 4, event: "updates", data: { step: { n: 4 } } });
    log.add({ seq: 5, event: "custom", data: "five" });
    await log.flush();
    const all = await readEventLog(scope, run);
    expect(all.map((f) => [f.seq, f.event, f.data])).toEqual([
      [1, "values", { n: 1 }],
      [2, "values", { n: 2 }],
      [3, "values", { n: 3 }],
      [4, "updates", { step: { n: 4 } }],
      [5, "custom", "five"],
    ]);
    // Resuming inside a chunk and at a chunk's end.
    expect((await readEventLog(scope, run, 2)).map((f) => f.seq)).toEqual([3, 4, 5]);
    expect((await readEventLog(scope, run, 3)).map((f) => f.seq)).toEqual([4, 5]);
    expect(await readEventLog(scope, run, 5)).toEqual([]);
    expect(await lastEventSeq(scope, run)).toBe(5);
    await deleteEventLog(scope, run);
    expect(await readEventLog(scope, run)).toEqual([]);
    expect(await lastEventSeq(scope, run)).toBe(0);
  });

  it("splits a flush too big for one item into several, keeping every frame in order", async () => {
    const run = randomUUID();
    const log = new EventLog(scope, run);
    const big = "x".repeat(200_000);
    for (let seq = 1; seq <= 5; seq++) log.add({ seq, event: "values", data: { seq, big } });
    await log.flush();
    const frames = await readEventLog(scope, run, 1);
    expect(frames.map((f) => f.seq)).toEqual([2, 3, 4, 5]);
    expect(frames.every((f) => (f.data as { big: string }).big.length === 200_000)).toBe(true);
    // A frame beyond the per-frame limit is stored as a marker, not dropped.
    log.add({ seq: 6, event: "values", data: "y".repeat(400_000) });
    await log.flush();
    expect((await readEventLog(scope, run, 5))[0]).toEqual({
      seq: 6,
      event: "values",
      data: { truncated: true },
    });
  });
});
