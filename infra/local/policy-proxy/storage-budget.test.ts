import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Refused } from "./refusal.ts";
import {
  type BudgetScope,
  MEASURE_DUTY,
  SMALL_WRITE_BYTES,
  StorageBudget,
  type StorageBudgetOptions,
} from "./storage-budget.ts";

// A deployment's storage budget: charges refused past it after a measurement of what is stored, kept per
// deployment, persisted across restarts, and one object bounded.
const a: BudgetScope = { tenant_id: "t", deployment_id: "d-a" };
const b: BudgetScope = { tenant_id: "t", deployment_id: "d-b" };
/** A write too large for the reserve past the budget. */
const BIG = SMALL_WRITE_BYTES + 1;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function budget(over: Partial<StorageBudgetOptions> = {}) {
  const measured: BudgetScope[] = [];
  const stored = new Map<string, number>();
  let now = 0;
  const it = new StorageBudget({
    limitBytes: 1000,
    maxObjectBytes: 300,
    measure: async (s) => {
      measured.push(s);
      return stored.get(s.deployment_id) ?? 0;
    },
    objectSize: async () => undefined,
    remeasureAfterMs: 10_000,
    now: () => now,
    ...over,
  });
  return { it, measured, stored, advance: (ms: number) => (now += ms) };
}
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe("a deployment's storage budget", () => {
  it("takes writes up to the budget and refuses the one past it, with the storage quota's code", async () => {
    const { it: s, stored } = budget({ limitBytes: 100_000 });
    await s.charge(a, 60_000);
    await s.charge(a, 40_000);
    stored.set("d-a", 100_000);
    const err = await refusal(s.charge(a, 5000));
    expect(err).toBeInstanceOf(Refused);
    expect((err as Refused).code).toBe("StorageQuotaExceeded");
    expect(s.used(a)).toBe(100_000);
  });

  it("lets small writes (a run's status, its error) use a reserve of 1/32 past the budget, and no more", async () => {
    const { it: s, stored } = budget({ limitBytes: 320_000 });
    await s.charge(a, 320_000);
    stored.set("d-a", 320_000);
    await expect(s.charge(a, SMALL_WRITE_BYTES + 1)).rejects.toBeInstanceOf(Refused);
    for (let i = 0; i < 10_000 / 1000; i++) await s.charge(a, 1000);
    stored.set("d-a", 330_000);
    await expect(s.charge(a, 1)).rejects.toBeInstanceOf(Refused);
    expect(s.used(a)).toBe(330_000);
  });

  it("is per deployment: one at its budget leaves another's writes alone", async () => {
    const { it: s, stored } = budget();
    await s.charge(a, 1000);
    stored.set("d-a", 1000);
    await expect(s.charge(a, BIG)).rejects.toBeInstanceOf(Refused);
    await s.charge(b, 1000);
    expect(s.used(b)).toBe(1000);
  });

  it("measures what is stored before refusing: deleted bytes are room again", async () => {
    const { it: s, stored, measured } = budget();
    await s.charge(a, 900);
    stored.set("d-a", 100);
    await s.charge(a, 500);
    expect(measured).toEqual([a]);
    expect(s.used(a)).toBe(600);
  });

  it("measures at most once per interval while the deployment stays at its budget", async () => {
    const { it: s, stored, measured, advance } = budget({ limitBytes: 100_000 });
    stored.set("d-a", 100_000);
    await s.charge(a, 100_000);
    for (let i = 0; i < 5; i++) await expect(s.charge(a, BIG)).rejects.toBeInstanceOf(Refused);
    expect(measured.length).toBe(1);
    advance(10_000);
    stored.set("d-a", 0);
    await s.charge(a, BIG);
    expect(measured.length).toBe(2);
    expect(s.used(a)).toBe(BIG);
  });

  it("measures a workspace once per interval between all its deployments, one measurement at a time on the platform", async () => {
    const { it: s, measured, advance } = budget({ limitBytes: 100_000 });
    const one = Array.from({ length: 20 }, (_, i) => ({ tenant_id: "w1", deployment_id: `d-${i}` }));
    const other: BudgetScope = { tenant_id: "w2", deployment_id: "d-other" };
    for (const scope of [...one, other]) await s.charge(scope, 100_000);
    const outcomes = await Promise.all([...one, other].map((scope) => refusal(s.charge(scope, BIG))));
    expect(measured.map((m) => m.deployment_id)).toEqual(["d-0", "d-other"]);
    expect(outcomes.filter((o) => o === undefined)).toHaveLength(2);
    advance(10_000);
    await s.charge(one[5]!, BIG);
    expect(measured.at(-1)).toEqual(one[5]);
  });

  it("never runs two measurements at once, and spaces a workspace's by MEASURE_DUTY times the last one's duration", async () => {
    let now = 0;
    let running = 0;
    let most = 0;
    const s = new StorageBudget({
      limitBytes: 100_000,
      maxObjectBytes: 300,
      remeasureAfterMs: 10_000,
      objectSize: async () => undefined,
      now: () => now,
      measure: async () => {
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 5));
        now += 2000; // a scan of large tables
        running--;
        return 0;
      },
    });
    const scopes = ["w1", "w2", "w3"].map((t) => ({ tenant_id: t, deployment_id: `d-${t}` }));
    for (const scope of scopes) await s.charge(scope, 100_000);
    await Promise.all(scopes.map((scope) => s.charge(scope, BIG)));
    expect(most).toBe(1);
    // w1's measurement took 2 s: its next waits 40 s (not 10 s) from its end.
    await s.charge(scopes[0]!, 100_000 - BIG);
    now += 30_000;
    await expect(s.charge(scopes[0]!, BIG)).rejects.toBeInstanceOf(Refused);
    now += 20_000;
    await s.charge(scopes[0]!, BIG);
    expect(MEASURE_DUTY).toBe(20);
  });

  it("refuses when what is stored cannot be measured", async () => {
    const s = new StorageBudget({
      limitBytes: 10,
      maxObjectBytes: 10,
      measure: () => Promise.reject(new Error("backend down")),
      objectSize: async () => undefined,
    });
    await s.charge(a, 10);
    const err = await refusal(s.charge(a, 1));
    expect((err as Refused).code).toBe("StorageQuotaExceeded");
  });

  it("keeps its count across a restart (its file), so a restarted platform refuses too", async () => {
    const dir = mkdtempSync(join(tmpdir(), "budget-"));
    dirs.push(dir);
    const file = join(dir, "usage.json");
    const first = budget({ file }).it;
    await first.charge(a, 1000);
    first.flush();
    const { it: second, stored, measured } = budget({ file });
    stored.set("d-a", 1000);
    expect(second.used(a)).toBe(1000);
    await expect(second.charge(a, BIG)).rejects.toBeInstanceOf(Refused);
    expect(measured).toEqual([a]);
  });

  it("bounds one object: a PUT, and a multipart upload's parts together", () => {
    const { it: s } = budget();
    expect(() => s.checkObject(300)).not.toThrow();
    expect(
      (() => {
        try {
          s.checkObject(301);
        } catch (e) {
          return (e as Refused).code;
        }
      })(),
    ).toBe("EntityTooLarge");
    s.checkPart("u1", 200);
    expect(() => s.checkPart("u1", 200)).toThrow(Refused);
    s.checkPart("u2", 300);
    s.endUpload("u2");
    expect(() => s.checkPart("u2", 300)).not.toThrow();
  });
});
