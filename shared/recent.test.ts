import { describe, expect, it, vi } from "vitest";
import { recentReads } from "./recent.ts";

describe("recentReads", () => {
  it("serves a value read within `ms` again, reads again after it or after forget, and never keeps a miss", async () => {
    vi.useFakeTimers();
    const store = new Map([["a", 1]]);
    const read = vi.fn(async (k: string) => store.get(k));
    const r = recentReads(read, { ms: 1000 });
    expect(await r.get("a")).toBe(1);
    store.set("a", 2);
    expect(await r.get("a")).toBe(1);
    vi.advanceTimersByTime(1001);
    expect(await r.get("a")).toBe(2);
    store.set("a", 3);
    r.forget("a");
    expect(await r.get("a")).toBe(3);
    expect(await r.get("b")).toBeUndefined();
    store.set("b", 4);
    expect(await r.get("b")).toBe(4);
    expect(read).toHaveBeenCalledTimes(5);
    vi.useRealTimers();
  });

  it("does not keep a value `keep` refuses (a deployment not yet deployed is read again each time)", async () => {
    const store = new Map<string, { active?: string }>([["d", {}]]);
    const read = vi.fn(async (k: string) => store.get(k));
    const r = recentReads(read, { ms: 60_000, keep: (d) => Boolean(d.active) });
    expect(await r.get("d")).toEqual({});
    store.set("d", { active: "rev-1" });
    expect(await r.get("d")).toEqual({ active: "rev-1" });
    store.set("d", { active: "rev-2" });
    expect(await r.get("d")).toEqual({ active: "rev-1" });
    expect(read).toHaveBeenCalledTimes(2);
  });
});
