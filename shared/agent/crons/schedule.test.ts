import { describe, expect, it } from "vitest";
import {
  nextRun,
  nextRunDate,
  nextSweepAt,
  parseSchedule,
  scheduleProblem,
  TICK_LAG_MS,
} from "./schedule.ts";

const at = (iso: string) => Date.parse(iso);
const next = (expr: string, after: string) =>
  new Date(nextRun(parseSchedule(expr), at(after))!).toISOString();

describe("cron schedules (5 fields, UTC)", () => {
  it("finds the next minute strictly after the given time", () => {
    expect(next("* * * * *", "2026-11-24T16:30:00.000Z")).toBe("2026-11-24T16:31:00.000Z");
    expect(next("* * * * *", "2026-11-24T16:30:59.999Z")).toBe("2026-11-24T16:31:00.000Z");
    expect(next("*/15 * * * *", "2026-11-24T16:31:00Z")).toBe("2026-11-24T16:45:00.000Z");
    expect(next("5/20 9-10 * * *", "2026-11-24T10:46:00Z")).toBe("2026-11-25T09:05:00.000Z");
    expect(next("0 0 1 1 *", "2026-11-24T16:30:00Z")).toBe("2027-01-01T00:00:00.000Z");
    expect(next("@hourly", "2026-11-24T16:30:00Z")).toBe("2026-11-24T17:00:00.000Z");
    expect(next("0 12 29 feb *", "2026-01-01T00:00:00Z")).toBe("2028-02-29T12:00:00.000Z");
  });

  it("days: day-of-week by number or name (7 is Sunday), either day field when both are restricted", () => {
    // 2026-11-24 is a Tuesday.
    expect(next("0 8 * * sun", "2026-11-24T00:00:00Z")).toBe("2026-11-29T08:00:00.000Z");
    expect(next("0 8 * * 7", "2026-11-24T00:00:00Z")).toBe("2026-11-29T08:00:00.000Z");
    expect(next("0 8 * * MON-FRI", "2026-11-28T00:00:00Z")).toBe("2026-11-30T08:00:00.000Z");
    expect(next("0 8 1 * 3", "2026-11-24T00:00:00Z")).toBe("2026-11-25T08:00:00.000Z");
    expect(next("0 8 1,15 * *", "2026-11-24T00:00:00Z")).toBe("2026-12-01T08:00:00.000Z");
  });

  it("says what is wrong with a bad expression", () => {
    expect(scheduleProblem("* * * * *")).toBeUndefined();
    expect(scheduleProblem("61 * * * *")).toMatch(/minute field: 61 is out of range 0-59/);
    expect(scheduleProblem("* * * *")).toMatch(/expected 5 fields/);
    expect(scheduleProblem("* * * * * *")).toMatch(/got 6/);
    expect(scheduleProblem("* 24 * * *")).toMatch(/hour field: 24 is out of range 0-23/);
    expect(scheduleProblem("* * 0 * *")).toMatch(/day-of-month field: 0 is out of range 1-31/);
    expect(scheduleProblem("* * * 13 *")).toMatch(/month field/);
    expect(scheduleProblem("*/0 * * * *")).toMatch(/step "0"/);
    expect(scheduleProblem("5-1 * * * *")).toMatch(/runs backwards/);
    expect(scheduleProblem("a * * * *")).toMatch(/"a" is not a number/);
    expect(scheduleProblem("0 0 30 2 *")).toMatch(/never fires/);
  });

  it("an end time bounds the next run", () => {
    expect(nextRunDate("0 * * * *", at("2026-11-24T16:30:00Z"), "2026-11-24T17:00:00Z")).toBe(
      "2026-11-24T17:00:00.000Z",
    );
    expect(nextRunDate("0 * * * *", at("2026-11-24T16:30:00Z"), "2026-11-24T16:59:00Z")).toBeUndefined();
  });

  it("the minute timer sweeps just after the next minute starts, whatever the clock says now", () => {
    expect(TICK_LAG_MS).toBeGreaterThan(0);
    expect(TICK_LAG_MS).toBeLessThan(5_000);
    expect(nextSweepAt(at("2026-11-24T16:30:00.000Z"))).toBe(at("2026-11-24T16:31:00.250Z"));
    expect(nextSweepAt(at("2026-11-24T16:30:59.999Z"))).toBe(at("2026-11-24T16:31:00.250Z"));
    expect(nextSweepAt(at("2026-11-24T16:30:00.250Z"))).toBe(at("2026-11-24T16:31:00.250Z"));
    expect(nextSweepAt(at("2026-12-31T23:59:30.000Z"))).toBe(at("2027-01-01T00:00:00.250Z"));
  });
});
