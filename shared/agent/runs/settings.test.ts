import { describe, expect, it } from "vitest";
import { MAX_AFTER_SECONDS, MAX_TIMER_MS, wakeTimerMs } from "./settings.ts";

// A delayed run's wake-up timer: Node fires a timer beyond 2^31-1 ms at once (with a TimeoutOverflowWarning),
// which would wake the thread in a loop until the run is due.
describe("delayed runs' timers", () => {
  it("a wait within a timer's reach is one timer, a little late", () => {
    expect(wakeTimerMs(1000)).toBe(1005);
    expect(wakeTimerMs(-50)).toBe(5);
  });

  it("a wait beyond 24.8 days is capped: the timer wakes early and the thread re-arms it", () => {
    const thirtyDays = 30 * 24 * 3600 * 1000;
    expect(thirtyDays).toBeGreaterThan(MAX_TIMER_MS);
    expect(wakeTimerMs(thirtyDays)).toBe(MAX_TIMER_MS);
    expect(wakeTimerMs(MAX_AFTER_SECONDS * 1000)).toBe(MAX_TIMER_MS);
  });

  it("the longest after_seconds is one year", () => {
    expect(MAX_AFTER_SECONDS).toBe(31_536_000);
  });
});
