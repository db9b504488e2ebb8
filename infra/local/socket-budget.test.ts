import { describe, expect, it } from "vitest";
import { SocketBudget } from "./socket-budget.ts";

describe("a runtime's socket budget", () => {
  it("holds no more bytes at once than its capacity: a request that does not fit waits for a release", async () => {
    const budget = new SocketBudget(10, 5);
    const a = await budget.reserve(6);
    let bGranted = false;
    const b = budget.reserve(6).then((r) => {
      bGranted = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 5));
    expect(bGranted).toBe(false);
    expect(budget.reserved).toBe(6);
    a!();
    const releaseB = await b;
    expect(budget.reserved).toBe(6);
    releaseB!();
    expect(budget.reserved).toBe(0);
  });

  it("refuses at once beyond its queue", async () => {
    const budget = new SocketBudget(10, 1);
    await budget.reserve(10);
    void budget.reserve(1);
    expect(await budget.reserve(1)).toBeUndefined();
  });

  it("serves in order of arrival: a large request is not starved by small ones behind it", async () => {
    const budget = new SocketBudget(10, 5);
    const first = await budget.reserve(5);
    const order: string[] = [];
    const noted = (name: string) => (r: (() => void) | undefined) => {
      order.push(name);
      return r;
    };
    const large = budget.reserve(10).then(noted("large"));
    const small = budget.reserve(1).then(noted("small"));
    first!();
    (await large)!();
    (await small)!();
    expect(order).toEqual(["large", "small"]);
  });

  it("a release counts once, and a reservation is never more than the capacity", async () => {
    const budget = new SocketBudget(10, 5);
    const r = await budget.reserve(50);
    expect(budget.reserved).toBe(10);
    r!();
    r!();
    expect(budget.reserved).toBe(0);
  });
});
