import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TooManyRequests } from "../errors.ts";
import { admitRequest, BURST_SECONDS, limitFor, rateWindow } from "./rate-limit.ts";
import { windowAt } from "./window-counter.ts";

// The window arithmetic of the per-workspace rate limit: what a window holds and how long it lasts, where a
// moment falls, and the Retry-After a full window answers; a request's answer while the store's write hangs (a
// fault DynamoDB Local cannot be made to show, hence the mocked records). Counting in DynamoDB: test/rate-limit.

// A workspace of 3 requests per (capped) hour-long window, whose count's UpdateItem never answers.
vi.mock("../records/identity.ts", () => ({
  tenants: {
    get: async () => ({ id: "stalled", name: "s", created_at: "", rate_limit: 1e-6, rate_burst: 3 }),
  },
  addRequests: () => new Promise<number>(() => {}),
}));
describe("rate limit windows", () => {
  it("a window holds the burst and lasts burst/perSecond seconds", () => {
    expect(rateWindow({ perSecond: 200, burst: 1000 })).toEqual({ limit: 1000, ms: 5000 });
    expect(rateWindow({ perSecond: 10, burst: 10 })).toEqual({ limit: 10, ms: 1000 });
    expect(rateWindow({ perSecond: 0.5, burst: 1 })).toEqual({ limit: 1, ms: 2000 });
  });

  it("0, a negative or no number turns the limit off", () => {
    for (const perSecond of [0, -5, Number.NaN]) expect(rateWindow({ perSecond, burst: 10 })).toBeUndefined();
  });

  it("a window admits at least one request and lasts at most an hour", () => {
    expect(rateWindow({ perSecond: 100, burst: 0 })).toEqual({ limit: 1, ms: 10 });
    expect(rateWindow({ perSecond: 1e-9, burst: 5 })?.ms).toBe(3_600_000);
  });

  it("Retry-After is the whole seconds until the window ends, at least 1", () => {
    expect(windowAt(10_000, 5000)).toEqual({ start: 10_000, retryAfterSeconds: 5 });
    expect(windowAt(12_100, 5000)).toEqual({ start: 10_000, retryAfterSeconds: 3 });
    expect(windowAt(14_999, 5000)).toEqual({ start: 10_000, retryAfterSeconds: 1 });
    expect(windowAt(1_000_250, 500)).toEqual({ start: 1_000_000, retryAfterSeconds: 1 });
  });

  it("every moment falls in the window that starts at or before it, and waiting Retry-After leaves it", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 45 }), fc.integer({ min: 1, max: 3_600_000 }), (now, ms) => {
        const { start, retryAfterSeconds } = windowAt(now, ms);
        expect(start % ms).toBe(0);
        expect(start).toBeLessThanOrEqual(now);
        expect(now).toBeLessThan(start + ms);
        expect(Number.isInteger(retryAfterSeconds)).toBe(true);
        expect(retryAfterSeconds).toBeGreaterThanOrEqual(1);
        expect(now + retryAfterSeconds * 1000).toBeGreaterThanOrEqual(start + ms);
        expect(retryAfterSeconds).toBeLessThanOrEqual(Math.max(1, Math.ceil(ms / 1000)));
      }),
    );
  });
});

describe("a workspace's limit", () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it("is the setting's unless the workspace record sets its own", () => {
    process.env.WORKSPACE_RATE_LIMIT = "50";
    process.env.WORKSPACE_RATE_BURST = "120";
    expect(limitFor(undefined)).toEqual({ perSecond: 50, burst: 120 });
    expect(limitFor({ rate_burst: 400 })).toEqual({ perSecond: 50, burst: 400 });
    expect(limitFor({ rate_limit: 2, rate_burst: 3 })).toEqual({ perSecond: 2, burst: 3 });
    expect(limitFor({ rate_limit: 0 })).toEqual({ perSecond: 0, burst: 0 });
  });

  it("a workspace's own rate without a burst gets BURST_SECONDS of it, not the setting's burst", () => {
    process.env.WORKSPACE_RATE_BURST = "1000";
    expect(limitFor({ rate_limit: 2 })).toEqual({ perSecond: 2, burst: 2 * BURST_SECONDS });
  });

  it("defaults: 200 requests per second, a burst of 5 s worth (a window of 1,000 requests per 5 s)", () => {
    delete process.env.WORKSPACE_RATE_LIMIT;
    delete process.env.WORKSPACE_RATE_BURST;
    expect(rateWindow(limitFor(undefined))).toEqual({ limit: 1000, ms: 5000 });
  });
});

describe("the 429", () => {
  it("says why in the platform's error shape and carries Retry-After", () => {
    const err = new TooManyRequests(3);
    expect(err.status).toBe(429);
    expect(err.body()).toEqual({ detail: expect.stringMatching(/rate limit/i) });
    expect(err.headers()).toEqual({ "retry-after": "3" });
  });
});

describe("a request's answer", () => {
  it("waits for the count's write no longer than LEARN_WAIT_MS: with the UpdateItem hanging, 3 pass and the 4th gets the 429", async () => {
    process.env.WORKSPACE_RATE_LIMIT = "200";
    const answer = (p: Promise<void>) =>
      Promise.race([
        p.then(
          () => "admitted",
          (err) => (err instanceof TooManyRequests ? "429" : String(err)),
        ),
        new Promise((r) => setTimeout(r, 1000, "waited")),
      ]);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await answer(admitRequest("stalled")));
    expect(answers).toEqual(["admitted", "admitted", "admitted", "429"]);
  });
});
