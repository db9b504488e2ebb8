import { describe, expect, it } from "vitest";
import {
  askDrain,
  askingDrains,
  DrainAsks,
  drainHeaderValue,
  MAX_DRAINS_PER_ANSWER,
  threadOfDrainHeader,
} from "./drain-asks.ts";

// A runtime asks the platform for drains with a request's answer; the platform takes what it asks as untrusted.
describe("asking for drains", () => {
  it("goes with the request's answer until it was answered; outside a request nothing is asked", async () => {
    const sent: string[] = [];
    expect(askDrain("outside")).toBe(false);
    await askingDrains(
      (t) => sent.push(t) > 0,
      async (answered) => {
        expect(askDrain("th-1")).toBe(true);
        await new Promise((r) => setTimeout(r, 1));
        expect(askDrain("th-2")).toBe(true);
        answered();
        expect(askDrain("th-3")).toBe(false);
      },
    );
    expect(sent).toEqual(["th-1", "th-2"]);
  });

  it("the platform takes each thread once, at most MAX_DRAINS_PER_ANSWER, and refuses malformed ids", () => {
    const asks = new DrainAsks();
    expect(asks.take("th-1")).toBe("th-1");
    expect(asks.take("th-1")).toBeUndefined();
    for (const bad of [7, "", "x".repeat(129), null, { id: "th" }]) expect(asks.take(bad)).toBeUndefined();
    expect(asks.refused).toBe(5);
    for (let i = 0; i < MAX_DRAINS_PER_ANSWER + 10; i++) asks.take(`t-${i}`);
    expect(asks.threads.size).toBe(MAX_DRAINS_PER_ANSWER);
    expect(asks.refused).toBe(5 + 11);
  });

  it("the local header carries any id", () => {
    for (const id of ["th-1", "a,b c", "ü/%"]) expect(threadOfDrainHeader(drainHeaderValue(id))).toBe(id);
    expect(threadOfDrainHeader("%E0%A4%A")).toBeUndefined();
    expect(threadOfDrainHeader(["a", "b"])).toBeUndefined();
  });
});
