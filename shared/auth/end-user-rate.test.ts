import { afterEach, describe, expect, it } from "vitest";
import { buildConfig, useConfig } from "../config.ts";
import { TooManyRequests } from "../errors.ts";
import { EndUserLimiter } from "./end-user-rate.ts";
import { WindowCounter } from "./window-counter.ts";

// Keyless requests to a custom-auth deployment count per client address and per deployment (issue 33).
const totals = new Map<string, number>();
const limiter = () =>
  new EndUserLimiter(
    new WindowCounter(async (key, start, n) => {
      const k = `${key}@${start}`;
      totals.set(k, (totals.get(k) ?? 0) + n);
      return totals.get(k)!;
    }),
  );
/** The limits a case runs under: a configuration built from them, process.env left alone. */
const limits = (env: Record<string, string>) => useConfig(buildConfig(env));
const refusal = (p: Promise<void>) =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );

afterEach(() => {
  totals.clear();
  useConfig(undefined);
  delete process.env.AGENT_END_USER_RATE_LIMIT;
  delete process.env.AGENT_END_USER_CLIENT_RATE_LIMIT;
});

describe("end users' buckets", () => {
  it("one client beyond its bucket gets 429 with Retry-After; another client still passes", async () => {
    limits({ AGENT_END_USER_CLIENT_RATE_LIMIT: "2" });
    const l = limiter();
    for (let i = 0; i < 10; i++) await l.admit("d1", "10.0.0.1");
    const err = await refusal(l.admit("d1", "10.0.0.1"));
    expect(err).toBeInstanceOf(TooManyRequests);
    expect((err as TooManyRequests).status).toBe(429);
    expect((err as TooManyRequests).headers()["retry-after"]).toMatch(/^\d+$/);
    expect((err as TooManyRequests).message).toMatch(/this client/);
    await l.admit("d1", "10.0.0.2");
    // The same address at another deployment is another bucket.
    await l.admit("d2", "10.0.0.1");
  });

  it("many clients together are held to the deployment's bucket; other deployments are not", async () => {
    limits({ AGENT_END_USER_RATE_LIMIT: "4" });
    const l = limiter();
    for (let i = 0; i < 20; i++) await l.admit("d1", `10.0.1.${i}`);
    const err = await refusal(l.admit("d1", "10.0.2.1"));
    expect((err as Error).message).toMatch(/the deployment's users/);
    await l.admit("d2", "10.0.2.1");
  });

  it("a client refused by its own bucket takes nothing from the deployment's", async () => {
    limits({ AGENT_END_USER_CLIENT_RATE_LIMIT: "1", AGENT_END_USER_RATE_LIMIT: "2" });
    const l = limiter();
    for (let i = 0; i < 5; i++) await l.admit("d1", "10.0.0.1");
    for (let i = 0; i < 50; i++) await refusal(l.admit("d1", "10.0.0.1"));
    for (let i = 0; i < 5; i++) await l.admit("d1", `10.0.3.${i}`);
  });

  it("a bad setting stops the start, naming the variable", async () => {
    process.env.AGENT_END_USER_CLIENT_RATE_LIMIT = "many";
    await expect(limiter().admit("d1", "10.0.0.1")).rejects.toThrow(/AGENT_END_USER_CLIENT_RATE_LIMIT/);
  });
});
