import { afterEach, describe, expect, it, vi } from "vitest";
import { type AddCount, blockOf, WindowCounter } from "./window-counter.ts";

// The in-memory decision of the per-workspace rate limit and its asynchronous flushes. The store is replaced by
// an `add` function here because its faults (a write that never answers, one that fails) are what is tested;
// two counters against DynamoDB Local's shared record: test/rate-limit.test.ts.
const WINDOW = { limit: 40, ms: 60_000 };
const T0 = 1_800_000_000_000 - (1_800_000_000_000 % WINDOW.ms);

/** An `add` that records its calls and answers the running total of what it was given. */
function recordingAdd() {
  const calls: number[] = [];
  let total = 0;
  const add: AddCount = async (_tenant, _start, n) => {
    calls.push(n);
    total += n;
    return total;
  };
  return { add, calls };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("a request's decision", () => {
  it("comes back at once, without waiting for the store's write: the limit holds even when no write ever answers", () => {
    const add = vi.fn<AddCount>(() => new Promise<number>(() => {}));
    const counter = new WindowCounter(add);
    const answers = Array.from({ length: WINDOW.limit + 3 }, () => counter.decide("t", WINDOW, T0 + 10));
    expect(answers.slice(0, WINDOW.limit).every((a) => a.admitted)).toBe(true);
    expect(answers.slice(WINDOW.limit)).toEqual(Array(3).fill({ admitted: false, retryAfterSeconds: 60 }));
    // The first block went to the store (and hangs there); nothing else waited for it.
    expect(add).toHaveBeenCalledTimes(1);
    expect(add.mock.calls[0]).toEqual([
      "t",
      T0,
      blockOf(WINDOW.limit),
      Math.ceil((T0 + WINDOW.ms) / 1000) + 60,
    ]);
  });

  it("counts what other processes added, as the store's answer reports it", async () => {
    const add: AddCount = async (_t, _s, n) => n + 30;
    const counter = new WindowCounter(add);
    for (let i = 0; i < blockOf(WINDOW.limit); i++)
      expect(counter.decide("t", WINDOW, T0).admitted).toBe(true);
    await counter.flushed();
    const admitted = Array.from({ length: 20 }, () => counter.decide("t", WINDOW, T0).admitted).filter(
      Boolean,
    );
    expect(admitted).toHaveLength(WINDOW.limit - 30 - blockOf(WINDOW.limit));
  });

  it("is per workspace, and a new window starts from nothing with Retry-After until its end", () => {
    const counter = new WindowCounter(async (_t, _s, n) => n);
    for (let i = 0; i < WINDOW.limit; i++) counter.decide("full", WINDOW, T0);
    expect(counter.decide("full", WINDOW, T0 + 45_500)).toEqual({ admitted: false, retryAfterSeconds: 15 });
    expect(counter.decide("other", WINDOW, T0 + 45_500)).toEqual({ admitted: true });
    expect(counter.decide("full", WINDOW, T0 + WINDOW.ms)).toEqual({ admitted: true });
  });
});

describe("flushing", () => {
  it("adds a block at once and the rest after the interval, each request exactly once", async () => {
    vi.useFakeTimers({ now: T0 });
    const { add, calls } = recordingAdd();
    const counter = new WindowCounter(add, 200);
    const block = blockOf(WINDOW.limit);
    for (let i = 0; i < block + 1; i++) counter.decide("t", WINDOW);
    expect(calls).toEqual([block]);
    await vi.advanceTimersByTimeAsync(199);
    expect(calls).toEqual([block]);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toEqual([block, 1]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls).toEqual([block, 1]);
  });

  it("keeps the count of a failed write for the next one: none lost, none added twice", async () => {
    vi.useFakeTimers({ now: T0 });
    const { add: good, calls } = recordingAdd();
    let failing = true;
    let tries = 0;
    const add: AddCount = async (...args) => {
      tries++;
      if (failing) throw new Error("store down");
      return good(...args);
    };
    const counter = new WindowCounter(add, 200);
    counter.decide("t", WINDOW);
    await vi.advanceTimersByTimeAsync(200);
    expect(tries).toBe(1);
    // A block pending meanwhile waits for the interval: a failing store gets no write per block.
    for (let i = 0; i < 2 * blockOf(WINDOW.limit); i++) counter.decide("t", WINDOW);
    expect(tries).toBe(1);
    failing = false;
    await vi.advanceTimersByTimeAsync(200);
    expect(calls).toEqual([1 + 2 * blockOf(WINDOW.limit)]);
  });

  it("drops the counts of a window that ended before they were added", async () => {
    vi.useFakeTimers({ now: T0 + WINDOW.ms - 50 });
    const { add, calls } = recordingAdd();
    const counter = new WindowCounter(add, 200);
    counter.decide("t", WINDOW);
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls).toEqual([]);
  });

  it("its timer keeps no process (or Lambda invocation) alive", async () => {
    const spy = vi.spyOn(globalThis, "setTimeout");
    const counter = new WindowCounter(async (_t, _s, n) => n);
    counter.decide("t", WINDOW, Date.now());
    const timer = spy.mock.results[0]?.value as NodeJS.Timeout;
    spy.mockRestore();
    expect(timer.hasRef()).toBe(false);
    await counter.flushed();
  });

  it("a process's first request of a window learns the shared total: another process cannot admit a window of its own", async () => {
    // Two Lambda environments of one workspace, one shared record (the store's running total).
    const totals = new Map<number, number>();
    const calls: number[] = [];
    const add: AddCount = async (_t, start, n) => {
      calls.push(n);
      totals.set(start, (totals.get(start) ?? 0) + n);
      return totals.get(start)!;
    };
    const small = { limit: 5, ms: 5000 };
    const a = new WindowCounter(add);
    const b = new WindowCounter(add);
    const first = await Promise.all([1, 2, 3, 4, 5].map(() => a.admit("t", small, T0 + 10)));
    expect(first.every((d) => d.admitted)).toBe(true);
    await a.flushed();
    expect(calls.reduce((x, y) => x + y, 0)).toBe(5);
    // b has heard nothing of this window: its first request asks the store, which counts it and answers 6.
    expect(await b.admit("t", small, T0 + 20)).toEqual({ admitted: false, retryAfterSeconds: 5 });
    expect(await b.admit("t", small, T0 + 30)).toEqual({ admitted: false, retryAfterSeconds: 5 });
    // The next window starts from nothing again.
    expect(await b.admit("t", small, T0 + 5010)).toEqual({ admitted: true });
  });

  it("a first request is admitted when the store cannot count it, and its count is added later", async () => {
    vi.useFakeTimers({ now: T0 + 10 });
    let fail = true;
    const { add: record, calls } = recordingAdd();
    const add: AddCount = async (...args) => {
      if (fail) throw new Error("store down");
      return record(...args);
    };
    const counter = new WindowCounter(add, 200);
    expect(await counter.admit("t", WINDOW)).toEqual({ admitted: true });
    fail = false;
    await vi.advanceTimersByTimeAsync(300);
    await counter.flushed();
    expect(calls).toEqual([1]);
  });

  it("a request that learns the total while a flush is under way: each add counted once, none lost", async () => {
    // Each add waits for the test to answer it, in the order the test chooses.
    const gates: (() => void)[] = [];
    const calls: number[] = [];
    let total = 0;
    const add: AddCount = (_t, _s, n) =>
      new Promise((resolve) =>
        gates.push(() => {
          calls.push(n);
          total += n;
          resolve(total);
        }),
      );
    const counter = new WindowCounter(add, 200);
    const first = counter.admit("t", WINDOW, T0 + 10);
    gates.shift()?.();
    expect(await first).toEqual({ admitted: true });
    // A block decided in memory goes at once; its add does not answer yet.
    for (let i = 0; i < blockOf(WINDOW.limit); i++) counter.decide("t", WINDOW, T0 + 20);
    expect(gates).toHaveLength(1);
    // The knowledge grows stale: the next request adds itself beside the flush under way, and is answered first.
    await new Promise((r) => setTimeout(r, 250));
    const next = counter.admit("t", WINDOW, T0 + 300);
    await Promise.resolve();
    expect(gates).toHaveLength(2);
    gates.pop()?.();
    expect(await next).toEqual({ admitted: true });
    gates.shift()?.();
    await counter.flushed();
    expect(calls).toEqual([1, 1, blockOf(WINDOW.limit)]);
    expect(total).toBe(2 + blockOf(WINDOW.limit));
    // In memory it counts each request once too: exactly the rest of the window is admitted.
    const rest = Array.from({ length: WINDOW.limit - total + 1 }, () =>
      counter.decide("t", WINDOW, T0 + 400),
    );
    expect(rest.filter((d) => d.admitted)).toHaveLength(WINDOW.limit - total);
    expect(rest.at(-1)).toMatchObject({ admitted: false });
  });

  it("a process whose knowledge of the window is older than the flush interval learns the total again", async () => {
    let total = 0;
    const add: AddCount = async (_t, _s, n) => (total += n);
    const small = { limit: 5, ms: 60_000 };
    const a = new WindowCounter(add, 200);
    const b = new WindowCounter(add, 200);
    expect(await a.admit("t", small, T0 + 10)).toEqual({ admitted: true }); // a learns 1
    for (let i = 0; i < 4; i++) expect((await b.admit("t", small, T0 + 20)).admitted).toBe(true);
    await b.flushed();
    expect(total).toBe(5);
    // a still knows 1; once that is older than the interval its next request asks the store (6 > 5).
    await new Promise((r) => setTimeout(r, 250));
    expect(await a.admit("t", small, T0 + 300)).toEqual({ admitted: false, retryAfterSeconds: 60 });
  });
});
